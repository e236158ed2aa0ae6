package gitrepository

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/githostserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/git"
)

// appHost is a fake GitHub API with one App, and a Git server that lets in
// only the installation tokens that API minted (as x-access-token).
type appHost struct {
	api    *githostserver.Server
	git    *gitserver.Server
	keyPEM []byte
}

const (
	testAppID       = 4242
	orgInstallation = 77
	usrInstallation = 88
)

// newAppHost starts the host with acme/app.git holding one commit on
// main, and returns the commit too.
func newAppHost(t *testing.T, tokenTTL time.Duration) (*appHost, string) {
	t.Helper()
	key, keyPEM := githostserver.NewAppKey(t)
	h := &appHost{keyPEM: keyPEM}
	h.api = githostserver.New(t, githostserver.Options{Kind: githostserver.GitHub, Token: "unused", App: &githostserver.App{
		ID: testAppID, Slug: "weir-test", PublicKey: &key.PublicKey, TokenTTL: tokenTTL,
		Orgs: map[string]int64{"acme": orgInstallation}, Users: map[string]int64{"octo": usrInstallation},
	}})
	h.git = gitserver.New(t, gitserver.Options{Username: "helper", Password: "helper-only", Accept: func(user, pass string) bool {
		return user == git.GitHubAppUsername && h.api.AcceptsToken(pass)
	}})
	h.git.InitRepo(t, "acme/app.git")
	return h, h.git.Commit(t, "acme/app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
}

// secret is an App Secret for the host; kv adds or overrides keys.
func (h *appHost) secret(ns, name string, kv ...string) *corev1.Secret {
	data := h.api.AppSecret(h.keyPEM)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(data, kv[i])
			continue
		}
		data[kv[i]] = []byte(kv[i+1])
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
}

// repo is a GitRepository of acme/app.git's main with provider github and
// the App Secret secretName.
func (h *appHost) repo(ns, name, secretName string) *sourcev1.GitRepository {
	obj := newRepo(ns, name, h.git.HTTPURL("acme/app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	obj.Spec.Provider = sourcev1.GitProviderGitHub
	obj.Spec.SecretRef = &meta.LocalObjectReference{Name: secretName}
	return obj
}

// paths are the App endpoints the API server was asked, in order.
func (h *appHost) paths() []string {
	var out []string
	for _, r := range h.api.Requests() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

func TestProviderGitHubClonesWithAnInstallationToken(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	h, sha := newAppHost(t, time.Hour)

	byID := h.repo(ns, "by-id", "app-by-id")
	env.Create(t, h.secret(ns, "app-by-id", githubapp.KeyInstallationID, fmt.Sprint(orgInstallation)), byID)
	byID = waitReady(t, env, byID, "main@sha1:"+sha)
	if ready := conditions.Get(byID, meta.ReadyCondition); ready.Message != "stored artifact for revision 'main@sha1:"+sha+"'" {
		t.Errorf("Ready message = %q", ready.Message)
	}

	// A second reconcile lists the remote again with the cached token.
	env.RequestReconcile(t, byID)
	env.WaitForReady(t, byID, nil)
	if m := h.api.Minted(); len(m) != 1 || m[0].Installation != orgInstallation {
		t.Errorf("minted %+v, want one token of installation %d for two reconciles", m, orgInstallation)
	}
	want := []string{fmt.Sprintf("POST /api/v3/app/installations/%d/access_tokens", orgInstallation)}
	if got := h.paths(); !slices.Equal(got, want) {
		t.Errorf("GitHub API asked %q, want %q", got, want)
	}

	// By owner: a user's installation is found after the organization
	// lookup fails, as Flux looks it up.
	byOwner := h.repo(ns, "by-owner", "app-by-owner")
	env.Create(t, h.secret(ns, "app-by-owner", githubapp.KeyInstallationOwner, "octo"), byOwner)
	waitReady(t, env, byOwner, "main@sha1:"+sha)
	want = []string{
		"GET /api/v3/orgs/octo/installation",
		"GET /api/v3/users/octo/installation",
		fmt.Sprintf("POST /api/v3/app/installations/%d/access_tokens", usrInstallation),
	}
	if got := h.paths(); !slices.Equal(got, want) {
		t.Errorf("GitHub API asked %q, want %q", got, want)
	}
}

// refreshBefore mirrors githubapp's: a token is replaced this long before
// it expires.
const refreshBefore = 5 * time.Minute

func TestProviderGitHubMintsAgainWhenTheTokenExpires(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	const margin = 3 * time.Second
	h, sha := newAppHost(t, refreshBefore+margin)
	obj := h.repo(ns, "expiring", "app")
	env.Create(t, h.secret(ns, "app", githubapp.KeyInstallationID, fmt.Sprint(orgInstallation)), obj)
	waitReady(t, env, obj, "main@sha1:"+sha)
	first := h.api.Minted()
	if len(first) != 1 {
		t.Fatalf("minted %d tokens, want 1", len(first))
	}
	time.Sleep(time.Until(first[0].ExpiresAt.Add(-refreshBefore)) + 100*time.Millisecond)
	env.RequestReconcile(t, obj)
	env.WaitForReady(t, obj, nil)
	if m := h.api.Minted(); len(m) != 2 || m[1].Token == m[0].Token {
		t.Errorf("after the token's refresh time: minted %d tokens, want a second one", len(m))
	}
}

func TestProviderGitHubFailures(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	h, sha := newAppHost(t, time.Hour)
	secret := h.secret(ns, "app", githubapp.KeyInstallationID, fmt.Sprint(orgInstallation))
	obj := h.repo(ns, "app", "app")
	env.Create(t, secret, obj)
	obj = waitReady(t, env, obj, "main@sha1:"+sha)
	good := *obj.Status.Artifact

	_, otherPEM := githostserver.NewAppKey(t)
	setSecret := func(kv ...string) func() {
		return func() {
			env.Update(t, secret, func() { secret.Data = h.secret(ns, "app", kv...).Data })
		}
	}
	setSpec := func(change func()) func() { return func() { env.Update(t, obj, change) } }
	secrets := []string{string(h.keyPEM), string(otherPEM)}
	for _, m := range h.api.Minted() {
		secrets = append(secrets, m.Token)
	}
	env.AssertFailuresKeepArtifact(t, obj, good, testenv.FailureChecks{Secrets: secrets, FetchFailedReason: true}, []testenv.Sabotage{
		{Name: "app id not a number", Break: setSecret(githubapp.KeyInstallationID, "77", githubapp.KeyAppID, "four"),
			Reason: sourcev1.AuthenticationFailedReason, Mentions: []string{"failed to configure authentication options", "githubAppID is not a positive number"}},
		{Name: "unknown installation", Break: setSecret(githubapp.KeyInstallationID, "999"),
			Reason: sourcev1.AuthenticationFailedReason, Mentions: []string{"failed to configure authentication options", "/app/installations/999/access_tokens", "404"}},
		{Name: "key GitHub does not know (401)", Break: setSecret(githubapp.KeyInstallationID, "77", githubapp.KeyPrivateKey, string(otherPEM)),
			Reason: sourcev1.AuthenticationFailedReason, Mentions: []string{"401", "A JSON web token could not be decoded"}},
		{Name: "no app data", Break: setSecret(githubapp.KeyAppID, "", githubapp.KeyPrivateKey, "", "username", "u", "password", "p"),
			Reason: sourcev1.InvalidProviderConfigurationReason, Mentions: []string{"secretRef with github app data must be specified when provider is set to github"}},
		{Name: "app data with provider generic", Break: func() {
			setSecret(githubapp.KeyInstallationID, "77")()
			setSpec(func() { obj.Spec.Provider = sourcev1.GitProviderGeneric })()
		}, Reason: sourcev1.InvalidProviderConfigurationReason, Mentions: []string{"secretRef '" + ns + "/app' has github app data but provider is not set to github"}},
		{Name: "no secretRef", Break: setSpec(func() { obj.Spec.Provider, obj.Spec.SecretRef = sourcev1.GitProviderGitHub, nil }),
			Reason: sourcev1.InvalidProviderConfigurationReason, Stalled: true, Mentions: []string{"secretRef with github app data must be specified when provider is set to github"}},
	})
	if got := len(h.api.Minted()); got != 1 {
		t.Errorf("minted %d tokens, want only the first reconcile's", got)
	}
}
