package imageupdateautomation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/devenv/testenv/githostserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/source/git"
)

// TestPushesThroughProviderGitHub pushes to a Git server that lets in only
// installation tokens a fake GitHub API minted for the GitRepository's
// App (found by its owner): the automation's clone and push present one.
func TestPushesThroughProviderGitHub(t *testing.T) {
	key, keyPEM := githostserver.NewAppKey(t)
	api := githostserver.New(t, githostserver.Options{Kind: githostserver.GitHub, Token: "unused", App: &githostserver.App{
		ID: 99, PublicKey: &key.PublicKey, Orgs: map[string]int64{"acme": 31},
	}})
	f := newFixtureWith(t, gitserver.GenerateClientKey(t), gitserver.Options{Username: gitUser, Password: gitPassword,
		Accept: func(user, pass string) bool { return user == git.GitHubAppUsername && api.AcceptsToken(pass) }})
	data := api.AppSecret(keyPEM)
	data[githubapp.KeyInstallationOwner] = []byte("acme")
	f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-auth", Namespace: f.ns}, Data: data},
		&sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
			Spec: sourcev1.GitRepositorySpec{
				URL: f.srv.HTTPURL("app.git"), Interval: metav1.Duration{Duration: time.Hour},
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"}, Provider: sourcev1.GitProviderGitHub,
				SecretRef: &meta.LocalObjectReference{Name: "app-auth"},
			},
		})
	f.policy(t, "2.0.0")
	obj := f.automation(nil)
	f.env.Create(t, obj)
	f.waitPushed(t, obj, "")

	if got := f.file(t, "main", "deploy/app.yaml"); got != f.deployment(newImage) {
		t.Errorf("deploy/app.yaml on main:\n%s", got)
	}
	if m := api.Minted(); len(m) != 1 || m[0].Installation != 31 {
		t.Errorf("minted %+v, want one token of installation 31 for the clone and the push", m)
	}
}
