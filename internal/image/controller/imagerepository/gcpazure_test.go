package imagerepository

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// scanAs scans host/org/app through a proxy to a local registry that
// accepts only user/password, with provider and the controller's
// identity, twice, and returns once both scans are handled. The proxy
// tunnels CONNECTs (token exchanges over TLS) to tunnel when it is set.
func scanAs(t *testing.T, env *testenv.Env, ns, provider, host, tunnel, user, password string) {
	t.Helper()
	reg := ociregistry.New(t, ociregistry.Options{Username: user, Password: password})
	reg.PushTags(t, "org/app", "app", "1.0.0", "1.1.0", "2.0.0")
	proxy := awsfake.NewProxy(t, awsfake.ProxyOptions{Registry: reg.URL(), Tunnel: tunnel}).URL
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: provider + "-proxy", Namespace: ns},
		Data: map[string][]byte{"address": []byte(proxy)}})
	repo := newRepo(ns, provider, host+"/org/app")
	repo.Spec.Provider = provider
	repo.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: provider + "-proxy"}
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)
	if n := repo.Status.LastScanResult.TagCount; n != 3 {
		t.Errorf("%s: tagCount %d, want 3", provider, n)
	}
	env.RequestReconcile(t, repo)
	env.WaitHandled(t, repo)
}

// TestProviderGCPAndAzureController scans Artifact Registry with the GKE
// metadata server's token and ACR with a managed identity's, as the
// controller: one token (and one ACR exchange) for two scans.
func TestProviderGCPAndAzureController(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	gfake := gcpfake.Start(t, gcpfake.Options{})
	gfake.Setenv(t)
	scanAs(t, env, ns, imagev1.GCPProvider, "europe-west1-docker.pkg.dev", "", gcp.RegistryUsername, gcpfake.ControllerToken())
	if n := gfake.Count("/computeMetadata/v1/instance/service-accounts/default/token"); n != 1 {
		t.Errorf("%d metadata token requests for two scans, want 1", n)
	}

	afake := azurefake.Start(t)
	afake.SetenvManagedIdentity(t)
	saved := azure.Default.HTTPClient
	azure.Default.HTTPClient = afake.Client()
	t.Cleanup(func() { azure.Default.HTTPClient = saved })
	const acr = "weir.azurecr.io"
	scanAs(t, env, ns, imagev1.AzureProvider, acr, afake.Addr(), azure.RegistryUsername, afake.RefreshToken(azurefake.ManagedIdentityClient, acr))
	if n, m := afake.Count("/msi/token"), afake.Count("/oauth2/exchange"); n != 1 || m != 1 {
		t.Errorf("%d managed identity tokens and %d ACR exchanges for two scans, want 1 and 1", n, m)
	}

	wrong := newRepo(ns, "wrong-host", "ghcr.io/org/app")
	wrong.Spec.Provider = imagev1.GCPProvider
	env.Create(t, wrong)
	ready := env.WaitForFailure(t, wrong, imagev1.AuthenticationFailedReason)
	if want := "failed to configure authentication options: invalid GCP registry: 'ghcr.io'. must match "; !strings.HasPrefix(ready.Message, want) {
		t.Errorf("wrong host: %q, want prefix %q", ready.Message, want)
	}
}
