package imageupdateautomation

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// entraProvider is the controller's Azure provider; a test gives it its
// fake's HTTP client.
var entraProvider = &azure.Provider{}

// TestPushesThroughProviderAzure pushes to a Git server that lets in, for
// the automation, only the controller's managed identity token for Azure
// DevOps' scope, as the bearer token of the GitRepository's provider azure.
func TestPushesThroughProviderAzure(t *testing.T) {
	fake := azurefake.Start(t)
	fake.SetenvManagedIdentity(t)
	saved := entraProvider.HTTPClient
	entraProvider.HTTPClient = fake.Client()
	t.Cleanup(func() { entraProvider.HTTPClient = saved })
	token := azurefake.AccessToken(azurefake.ManagedIdentityClient, azure.ScopeDevOps)
	f := newFixtureWith(t, gitserver.GenerateClientKey(t), gitserver.Options{Username: gitUser, Password: gitPassword, BearerToken: token})
	f.env.Create(t, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: f.srv.HTTPURL("app.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}, Provider: sourcev1.GitProviderAzure,
		},
	})
	f.policy(t, "2.0.0")
	obj := f.automation(nil)
	f.env.Create(t, obj)
	f.waitPushed(t, obj, "")

	if got := f.file(t, "main", "deploy/app.yaml"); got != f.deployment(newImage) {
		t.Errorf("deploy/app.yaml on main:\n%s", got)
	}
	if n := fake.Count("/msi/token"); n != 1 {
		t.Errorf("%d managed identity token requests, want 1 for the clone and the push", n)
	}
}
