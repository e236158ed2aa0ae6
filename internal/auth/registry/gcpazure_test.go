package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/auth/registry"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
)

// TestLoginGCPAndAzure logs the controller's identity into Artifact
// Registry and ACR through Login's switch, and checks a host of another
// cloud gets that cloud's Flux message.
func TestLoginGCPAndAzure(t *testing.T) {
	gfake := gcpfake.Start(t, gcpfake.Options{})
	gfake.Setenv(t)
	afake := azurefake.Start(t)
	afake.SetenvManagedIdentity(t)
	saved := *azure.Default
	azure.Default.HTTPClient = afake.Client()
	t.Cleanup(func() { *azure.Default = saved })

	tests := []struct {
		provider, image, user, password string
	}{
		{gcp.ProviderName, "oci://europe-west1-docker.pkg.dev/weir/charts/podinfo", gcp.RegistryUsername, gcpfake.ControllerToken()},
		{azure.ProviderName, "weir.azurecr.io/podinfo:6.0.0", azure.RegistryUsername, afake.RefreshToken(azurefake.ManagedIdentityClient, "weir.azurecr.io")},
	}
	for _, tt := range tests {
		a, err := registry.Login(context.Background(), tt.provider, tt.image, auth.Identity{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.provider, err)
		}
		c, _ := a.Authorization()
		if c.Username != tt.user || c.Password != tt.password {
			t.Errorf("%s: login %s / %.12s…", tt.provider, c.Username, c.Password)
		}
		if s := a.(interface{ String() string }).String(); strings.Contains(s, tt.password) {
			t.Errorf("%s: the login's String carries the token", tt.provider)
		}
	}
	for provider, want := range map[string]string{
		gcp.ProviderName:   "invalid GCP registry: 'weir.azurecr.io'",
		azure.ProviderName: "invalid Azure registry: 'europe-west1-docker.pkg.dev'",
	} {
		other := map[string]string{gcp.ProviderName: "weir.azurecr.io/app", azure.ProviderName: "europe-west1-docker.pkg.dev/p/r/app"}[provider]
		if _, err := registry.Login(context.Background(), provider, other, auth.Identity{}, nil); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want %s…", provider, err, want)
		}
	}
}
