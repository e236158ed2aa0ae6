package git

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"time"

	"github.com/weir-gitops/weir/internal/auth/githubapp"
)

// GitHubAppUsername is the basic-auth user GitHub expects with an App
// installation token, the one Flux sends.
const GitHubAppUsername = "x-access-token"

// ErrNoGitHubApp is returned by UseGitHubApp when the Secret holds no
// githubAppID.
var ErrNoGitHubApp = errors.New("secretRef with github app data must be specified when provider is set to github")

// githubAPITimeout bounds one call to GitHub's API for a token.
const githubAPITimeout = 30 * time.Second

// HasGitHubApp reports whether a Secret's data holds GitHub App
// credentials (a githubAppID), which only provider github uses.
func HasGitHubApp(data map[string][]byte) bool { return len(data[githubapp.KeyAppID]) > 0 }

// UseGitHubApp makes a authenticate as the GitHub App installation the
// Secret's data names (provider github): an installation token from
// tokens, asked for through a's proxy and trusting the Secret's ca.crt,
// sent as basic auth GitHubAppUsername:<token> in place of any username,
// password or bearer token. The error never holds the key or a token.
func (a *Auth) UseGitHubApp(ctx context.Context, tokens *githubapp.Cache, data map[string][]byte) error {
	app, err := githubapp.FromSecret(data)
	if err != nil {
		return err
	}
	if app == nil {
		return ErrNoGitHubApp
	}
	hc, err := a.githubAPIClient(data)
	if err != nil {
		return err
	}
	tok, err := tokens.Token(ctx, hc, app)
	if err != nil {
		return err
	}
	a.username, a.password, a.bearerToken = GitHubAppUsername, tok.Value, ""
	return nil
}

// githubAPIClient is the HTTP client tokens are asked for with: a's proxy,
// and the Secret's CA (GitHub Enterprise Server with a private CA) on top
// of the system's.
func (a *Auth) githubAPIClient(data map[string][]byte) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if a.Proxy != nil {
		tr.Proxy = http.ProxyURL(a.Proxy.url)
	}
	if ca := data[caKey(data)]; len(ca) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(ca) {
			return nil, invalidf("secret key %q holds no PEM certificate", caKey(data))
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: githubAPITimeout}, nil
}
