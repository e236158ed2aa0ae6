package helmchart

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// pullCloudChart pulls app 1.0.0 through an OCI HelmRepository with
// provider for oci://host/path, from a registry that takes only user and
// password, reached through the cloud proxy, as the controller's own
// identity. It checks the chart's digest and the host the proxy was asked
// for, and that exchanges (the cloud's token calls so far) is want, then
// that a second reconcile makes none (the token cache).
func pullCloudChart(t *testing.T, env *testenv.Env, ns, provider, host, path, user, password string, exchanges func() int, want int) {
	t.Helper()
	reg := ociregistry.New(t, ociregistry.Options{Username: user, Password: password})
	digest := reg.PushChart(t, path+"/app", "1.0.0", packageChart(t, "app", "1.0.0", "a"))
	hosts := proxyRegistry(t, reg)
	hr := newOCIRepo(ns, provider, "oci://"+host+"/"+path, "")
	hr.Spec.Provider, hr.Spec.Insecure = provider, true
	env.Create(t, hr)
	hc := newChart(ns, "app", sourcev1.HelmRepositoryKind, provider, "app", "1.0.0")
	env.Create(t, hc)
	waitVersion(t, env, hc, "1.0.0")
	if got := hc.Status.Artifact.Metadata[ociDigestKey]; got != digest {
		t.Errorf("digest %q, want %q", got, digest)
	}
	if h := hosts(); !slices.Contains(h, host) {
		t.Errorf("registry reached as %v, want %s", h, host)
	}
	if n := exchanges(); n != want {
		t.Errorf("%d exchanges, want %d", n, want)
	}
	env.RequestReconcile(t, hc)
	env.WaitHandled(t, hc)
	if !conditions.IsReady(hc) {
		t.Errorf("second reconcile: %v", hc.Status.Conditions)
	}
	if n := exchanges(); n != want {
		t.Errorf("after a second reconcile %d exchanges, want %d (cached)", n, want)
	}
}

// TestProviderGCP pulls a chart from "Artifact Registry" through an OCI
// HelmRepository with provider gcp, as the controller's GKE identity: one
// token from the metadata server, sent to the registry as
// oauth2accesstoken's password, and none on a second reconcile.
func TestProviderGCP(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := gcpfake.Start(t, gcpfake.Options{})
	fake.Setenv(t)
	const tokenPath = "/computeMetadata/v1/instance/service-accounts/default/token"
	pullCloudChart(t, env, ns, gcp.ProviderName, "europe-west1-docker.pkg.dev", "weir-project/charts",
		gcp.RegistryUsername, gcpfake.ControllerToken(), func() int { return fake.Count(tokenPath) }, 1)
	for _, r := range fake.Requests() {
		if r.Path == tokenPath && r.MetadataFlavor != "Google" {
			t.Errorf("metadata token request without Metadata-Flavor: %+v", r)
		}
	}
}

// TestProviderAzure pulls a chart from "ACR" through an OCI HelmRepository
// with provider azure, as the controller's AKS workload identity: the
// source-controller ServiceAccount's token (audience
// api://AzureADTokenExchange) is Entra's client assertion, the Entra
// token is exchanged at ACR's /oauth2/exchange for a refresh token, which
// the registry takes as the password of the 00000000-… user; one of each,
// and none on a second reconcile.
func TestProviderAzure(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := azurefake.Start(t)
	fake.Install(t, nil)
	const host, tenant, client = "weir.azurecr.io", "72f988bf-86f1-41af-91ab-2d7cd011db47", "33333333-3333-3333-3333-333333333333"
	setAzureWorkloadIdentity(t, env, ns, "source-controller", tenant, client)
	pullCloudChart(t, env, ns, azure.ProviderName, host, "charts", azure.RegistryUsername, fake.RefreshToken(client, host),
		func() int { return fake.Count("/oauth2/v2.0/token") + fake.Count("/oauth2/exchange") }, 2)
	var assertions []string
	for _, r := range fake.Requests() {
		if r.Assertion != nil {
			assertions = append(assertions, r.Form.Get("client_id")+" "+r.Assertion.Subject)
		}
	}
	if want := client + " " + satoken.ServiceAccount(ns, "source-controller"); len(assertions) != 1 || assertions[0] != want {
		t.Errorf("Entra's client assertions %q, want one, %q", assertions, want)
	}
	if n := fake.Count("/oauth2/exchange"); n != 1 {
		t.Errorf("%d ACR exchanges, want 1", n)
	}
}

// setAzureWorkloadIdentity is what AKS's workload identity webhook does
// for the controller's Pod: a projected token of the ServiceAccount ns/name
// for Entra, and the variables naming it, the tenant and the client.
func setAzureWorkloadIdentity(t *testing.T, env *testenv.Env, ns, name, tenant, client string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	env.Create(t, sa)
	req := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{azurefake.TokenExchangeAudience}}}
	if err := env.Client.SubResource("token").Create(t.Context(), sa, req); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(file, []byte(req.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AZURE_CLIENT_ID", client)
	t.Setenv("AZURE_TENANT_ID", tenant)
	t.Setenv("AZURE_FEDERATED_TOKEN_FILE", file)
}
