package gitrepository

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// entraProvider is the controller's Azure provider; a test gives it its
// fake's HTTP client.
var entraProvider = &azure.Provider{}

// useEntra starts an Entra fake whose managed identity is the
// controller's and whose token endpoint takes ServiceAccount assertions.
func useEntra(t *testing.T) *azurefake.Server {
	fake := azurefake.Start(t)
	fake.SetenvManagedIdentity(t)
	t.Setenv("AZURE_AUTHORITY_HOST", fake.URL)
	saved := entraProvider.HTTPClient
	entraProvider.HTTPClient = fake.Client()
	t.Cleanup(func() { entraProvider.HTTPClient = saved })
	return fake
}

// devOpsRepo is a Git server that lets in only the bearer token given
// (Azure DevOps takes the Entra token as one), with one commit on main.
func devOpsRepo(t *testing.T, token string) (*gitserver.Server, string) {
	srv := gitserver.New(t, gitserver.Options{BearerToken: token})
	srv.InitRepo(t, "org/project/_git/app")
	return srv, srv.Commit(t, "org/project/_git/app", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
}

// TestProviderAzureControllerIdentity clones with the controller's managed
// identity: its token for Azure DevOps' scope is the bearer token, asked
// for once across two reconciles.
func TestProviderAzureControllerIdentity(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := useEntra(t)
	srv, sha := devOpsRepo(t, azurefake.AccessToken(azurefake.ManagedIdentityClient, azure.ScopeDevOps))
	obj := newRepo(ns, "controller", srv.HTTPURL("org/project/_git/app"), &sourcev1.GitRepositoryRef{Branch: "main"})
	obj.Spec.Provider = sourcev1.GitProviderAzure
	env.Create(t, obj)
	waitReady(t, env, obj, "main@sha1:"+sha)
	env.RequestReconcile(t, obj)
	env.WaitForReady(t, obj, nil)

	var resources []string
	for _, r := range fake.Requests() {
		if r.Path == "/msi/token" {
			resources = append(resources, r.Query.Get("resource"))
		}
	}
	if len(resources) != 1 || resources[0] != strings.TrimSuffix(azure.ScopeDevOps, "/.default") {
		t.Errorf("managed identity asked for %q, want Azure DevOps' resource once", resources)
	}
}

// TestProviderAzureServiceAccount clones as a ServiceAccount federated with
// an Entra application: its TokenRequest token is the client assertion
// for Azure DevOps' scope. A ServiceAccount without the annotations is
// AuthenticationFailed with Flux's message.
func TestProviderAzureServiceAccount(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := useEntra(t)
	const tenant, app = "72f988bf-86f1-41af-91ab-2d7cd011db47", "44444444-4444-4444-4444-444444444444"
	srv, sha := devOpsRepo(t, azurefake.AccessToken(app, azure.ScopeDevOps))
	env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a",
		Annotations: map[string]string{azure.TenantIDAnnotation: tenant, azure.ClientIDAnnotation: app}}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}})
	repo := func(name, sa string) *sourcev1.GitRepository {
		obj := newRepo(ns, name, srv.HTTPURL("org/project/_git/app"), &sourcev1.GitRepositoryRef{Branch: "main"})
		obj.Spec.Provider, obj.Spec.ServiceAccountName = sourcev1.GitProviderAzure, sa
		return obj
	}
	obj := repo("team-a", "team-a")
	env.Create(t, obj)
	waitReady(t, env, obj, "main@sha1:"+sha)

	var asked []string
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, "/oauth2/v2.0/token") {
			asked = append(asked, r.Form.Get("client_id")+" "+r.Form.Get("scope"))
			if r.Assertion == nil || r.Assertion.Subject != "system:serviceaccount:"+ns+":team-a" || !r.Assertion.HasAudience(azure.TokenExchangeAudience) {
				t.Errorf("client assertion %+v", r.Assertion)
			}
		}
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], app+" ") || !strings.Contains(asked[0], azure.ScopeDevOps) {
		t.Errorf("token requests %q, want one of %s for %s", asked, app, azure.ScopeDevOps)
	}

	plain := repo("plain", "plain")
	env.Create(t, plain)
	ready := env.WaitForFailure(t, plain, sourcev1.AuthenticationFailedReason)
	want := "failed to configure authentication options: failed to get access token for Git repository: failed to get provider identity from service account '" +
		ns + "/plain' annotations: azure tenant ID is not set in the service account annotation azure.workload.identity/tenant-id"
	if ready.Message != want {
		t.Errorf("message %q\nwant    %q", ready.Message, want)
	}
}
