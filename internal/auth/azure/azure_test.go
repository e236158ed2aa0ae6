package azure_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m, testenv.APIServerOnly)
}

const (
	tenant  = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	clientA = "11111111-1111-1111-1111-111111111111"
	clientB = "22222222-2222-2222-2222-222222222222"
)

// setup starts the fake and clears the controller's Azure environment;
// the authority host is the fake's 127.0.0.1 address, which MSAL does not
// know, so it asks instance discovery first (answered by the fake too).
func setup(t *testing.T) (*azurefake.Server, *azure.Provider) {
	fake := azurefake.Start(t)
	fake.SetenvAuthority(t)
	return fake, &azure.Provider{HTTPClient: fake.Client()}
}

// TestServiceAccountRegistryLogins logs two ServiceAccounts (two Entra
// applications) into an ACR registry twice: one token exchange and one
// ACR exchange each, the second round from the cache.
func TestServiceAccountRegistryLogins(t *testing.T) {
	fake, p := setup(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	createSA(t, env, ns, "tenant-a", map[string]string{azure.TenantIDAnnotation: tenant, azure.ClientIDAnnotation: clientA})
	createSA(t, env, ns, "tenant-b", map[string]string{azure.TenantIDAnnotation: tenant, azure.ClientIDAnnotation: clientB})
	s := &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}
	const registry = "weir.azurecr.io"
	want := map[string]string{"tenant-a": fake.RefreshToken(clientA, registry), "tenant-b": fake.RefreshToken(clientB, registry)}
	for _, round := range []int{1, 2} {
		for _, name := range []string{"tenant-a", "tenant-b"} {
			id, _ := s.IdentityFor(ns, name)
			tok, err := p.RegistryLogin(context.Background(), registry, id, s)
			if err != nil {
				t.Fatalf("round %d, %s: %v", round, name, err)
			}
			if tok.Username != azure.RegistryUsername || tok.Value != want[name] || time.Until(tok.ExpiresAt) < 2*time.Hour {
				t.Errorf("round %d, %s: login %s / %.12s… expiring %s", round, name, tok.Username, tok.Value, tok.ExpiresAt)
			}
		}
	}
	if n := fake.Count("/oauth2/exchange"); n != 2 {
		t.Errorf("%d ACR exchanges, want 2", n)
	}
	assertRequests(t, fake, ns, "testdata/serviceaccounts.json")
}

// TestControllerWorkloadIdentity is the controller's own identity: the
// webhook's environment and a projected token file.
func TestControllerWorkloadIdentity(t *testing.T) {
	fake, p := setup(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	createSA(t, env, ns, "source-controller", nil)
	s := &auth.Settings{ObjectLevel: true, Client: env.Client}
	id, _ := s.IdentityFor(ns, "source-controller")
	projected, err := s.ServiceAccountToken(context.Background(), id, azure.TokenExchangeAudience)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(file, []byte(projected.Value), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AZURE_CLIENT_ID", clientA)
	t.Setenv("AZURE_TENANT_ID", tenant)
	t.Setenv("AZURE_FEDERATED_TOKEN_FILE", file)

	tok, err := p.AccessToken(context.Background(), auth.Identity{}, nil, azure.ScopeDevOps)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Value != azurefake.AccessToken(clientA, azure.ScopeDevOps) {
		t.Errorf("token = %q", tok.Value)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	if last.Assertion == nil || last.Assertion.Subject != "system:serviceaccount:"+ns+":source-controller" ||
		!last.Assertion.HasAudience(azure.TokenExchangeAudience) || last.Form.Get("client_id") != clientA {
		t.Errorf("token request = %+v", last)
	}
}

// TestControllerManagedIdentity is a managed identity whose endpoint the
// environment names (App Service's; AKS's IMDS address is fixed).
func TestControllerManagedIdentity(t *testing.T) {
	fake, p := setup(t)
	fake.SetenvManagedIdentity(t)
	tok, err := p.RegistryLogin(context.Background(), "weir.azurecr.cn", auth.Identity{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Value != fake.RefreshToken(azurefake.ManagedIdentityClient, "weir.azurecr.cn") {
		t.Errorf("login = %.12s…", tok.Value)
	}
	for _, r := range fake.Requests() {
		if r.Path == "/msi/token" && r.Query.Get("resource") != "https://management.chinacloudapi.cn" {
			t.Errorf("managed identity asked for %q", r.Query.Get("resource"))
		}
	}
}

func TestErrors(t *testing.T) {
	fake, p := setup(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake.Deny(clientB)
	createSA(t, env, ns, "no-tenant", map[string]string{azure.ClientIDAnnotation: clientA})
	createSA(t, env, ns, "no-client", map[string]string{azure.TenantIDAnnotation: tenant})
	createSA(t, env, ns, "denied", map[string]string{azure.TenantIDAnnotation: tenant, azure.ClientIDAnnotation: clientB})
	s := &auth.Settings{ObjectLevel: true, Client: env.Client}
	tests := []struct{ sa, registry, want string }{
		{"no-tenant", "weir.azurecr.io", "failed to get provider identity from service account '" + ns + "/no-tenant' annotations: azure tenant ID is not set in the service account annotation azure.workload.identity/tenant-id"},
		{"no-client", "weir.azurecr.io", "failed to get provider identity from service account '" + ns + "/no-client' annotations: azure client ID is not set in the service account annotation azure.workload.identity/client-id"},
		{"denied", "weir.azurecr.io", "failed to create access token for serviceaccount/" + ns + "/denied (Entra ID token endpoint, client assertion for client '" + clientB + "' in tenant '" + tenant + "'): "},
		{"denied", "ghcr.io", `invalid Azure registry: 'ghcr.io'. must match ^.+\.(azurecr\.io|azurecr\.cn|azurecr\.de|azurecr\.us)$`},
	}
	for _, tt := range tests {
		t.Run(tt.sa+"@"+tt.registry, func(t *testing.T) {
			id, _ := s.IdentityFor(ns, tt.sa)
			_, err := p.RegistryLogin(context.Background(), tt.registry, id, s)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant prefix %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "eyJ") || strings.Contains(err.Error(), "entra.") {
				t.Errorf("the error carries a token: %v", err)
			}
		})
	}
	if err := checkDenied(fake); err != "" {
		t.Error(err)
	}
}

// checkDenied makes sure the refusal came from the token endpoint.
func checkDenied(fake *azurefake.Server) string {
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, "/oauth2/v2.0/token") && r.Form.Get("client_id") == clientB && r.Status == 400 {
			return ""
		}
	}
	return "the token endpoint never refused the denied client"
}

func TestRegistryScope(t *testing.T) {
	tests := []struct{ registry, scope string }{
		{"weir.azurecr.io", "https://management.azure.com/.default"},
		{"weir.azurecr.cn", "https://management.chinacloudapi.cn/.default"},
		{"weir.azurecr.us", "https://management.usgovcloudapi.net/.default"},
		{"weir.azurecr.de", "https://management.azure.com/.default"},
	}
	for _, tt := range tests {
		if err := azure.ParseRegistry(tt.registry); err != nil {
			t.Errorf("%s: %v", tt.registry, err)
		}
		if got := azure.RegistryScope(tt.registry); got != tt.scope {
			t.Errorf("%s: scope %s, want %s", tt.registry, got, tt.scope)
		}
	}
	for _, bad := range []string{"azurecr.io", "weir.azurecr.io.evil.com", "127.0.0.1:5000"} {
		if azure.ParseRegistry(bad) == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func createSA(t *testing.T, env *testenv.Env, ns, name string, annotations map[string]string) {
	env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}})
}

// assertRequests compares the fake's record with a golden file, with the
// test's namespace, the fake's port and MSAL's per-request ids replaced.
func assertRequests(t *testing.T, fake *azurefake.Server, ns, path string) {
	t.Helper()
	reqs := fake.Requests()
	host := strings.TrimSuffix(strings.TrimPrefix(fake.URL, "https://"), "/")
	for i := range reqs {
		for _, k := range []string{"client-request-id", "x-client-SKU", "x-client-VER", "x-client-OS", "x-client-CPU", "x-ms-lib-capability"} {
			delete(reqs[i].Form, k)
			delete(reqs[i].Query, k)
		}
	}
	out, err := json.MarshalIndent(reqs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer(ns, "NAMESPACE", host, "AUTHORITY").Replace(string(out))
	golden.Assert(t, path, []byte(text+"\n"))
}
