package githost

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v75/github"

	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// gitHubOrigin is the one address whose API is not at /api/v3: github.com
// is served by api.github.com.
const gitHubOrigin = "https://github.com"

// GitHub is a client of one repository's GitHub REST API: api.github.com
// for github.com, https://HOST/api/v3 for GitHub Enterprise Server.
type GitHub struct {
	Client      *github.Client
	Owner, Repo string

	opts notifier.Options
	// app is set when the client authenticates as an App installation.
	app *githubapp.AuthClient
}

// NewGitHub returns the client of o's repository. As in Flux, the
// Secret's token (or, without one, its password) wins; without either,
// the Secret's GitHub App credentials are used.
func NewGitHub(o notifier.Options) (*GitHub, error) {
	_, owner, repo, err := ownerRepoOf(o)
	if err != nil {
		return nil, err
	}
	a, _ := ParseAddress(o.Address)
	g := &GitHub{Owner: owner, Repo: repo, opts: o}
	token := o.Token
	if token == "" {
		token = o.Password
	}
	switch {
	case token != "":
		g.Client = github.NewClient(o.HTTPClient).WithAuthToken(token)
	case o.GitHubApp != nil:
		g.app = githubapp.Default.Client(httpClient(o), o.GitHubApp)
		g.Client = github.NewClient(g.app.Client)
	default:
		return nil, fmt.Errorf("%w: %s provider needs the token key in its secret, or GitHub App credentials",
			notifier.ErrInvalidConfig, o.Type)
	}
	if a.Origin != gitHubOrigin {
		if g.Client, err = g.Client.WithEnterpriseURLs(a.Origin, a.Origin); err != nil {
			return nil, fmt.Errorf("%w: github enterprise address: %w", notifier.ErrInvalidConfig, err)
		}
	}
	return g, nil
}

// Secrets returns the credentials the client sent: the token, or the
// App's key and installation tokens.
func (g *GitHub) Secrets() []string {
	out := g.opts.Secrets()
	if g.app != nil {
		out = append(out, g.app.Secrets()...)
	}
	return out
}

// Login is the login GitHub shows as the author of what the client
// posts: the token's user, or "<slug>[bot]" for an App.
func (g *GitHub) Login(ctx context.Context) (string, error) {
	if g.app != nil {
		slug, err := githubapp.Default.Slug(ctx, httpClient(g.opts), g.opts.GitHubApp)
		if err != nil {
			return "", err
		}
		return slug + "[bot]", nil
	}
	u, _, err := g.Client.Users.Get(ctx, "")
	if err != nil {
		return "", fmt.Errorf("reading the authenticated user: %w", err)
	}
	return u.GetLogin(), nil
}

func httpClient(o notifier.Options) *http.Client {
	if o.HTTPClient == nil {
		return http.DefaultClient
	}
	return o.HTTPClient
}
