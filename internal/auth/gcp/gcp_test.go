package gcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m, testenv.APIServerOnly)
}

// setup starts the fake, points the metadata client at it, and returns a
// provider whose STS and IAM Credentials are the fake's.
func setup(t *testing.T) (*gcpfake.Server, *gcp.Provider) {
	fake := gcpfake.Start(t, gcpfake.Options{})
	fake.Setenv(t)
	return fake, &gcp.Provider{STSURL: fake.URL + "/v1/token", IAMCredentialsURL: fake.URL}
}

func TestControllerToken(t *testing.T) {
	fake, p := setup(t)
	s := &auth.Settings{Cache: auth.NewCache(10, time.Hour)}
	for range 2 {
		tok, err := p.AccessToken(context.Background(), auth.Identity{}, s)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Value != gcpfake.ControllerToken() || time.Until(tok.ExpiresAt) < 50*time.Minute {
			t.Fatalf("token = %q expiring %s", tok.Value, tok.ExpiresAt)
		}
	}
	const tokenPath = "/computeMetadata/v1/instance/service-accounts/default/token"
	if n := fake.Count(tokenPath); n != 1 {
		t.Fatalf("%d token requests, want 1 (the second from the cache): %+v", n, fake.Requests())
	}
	reqs := fake.Requests()
	r := reqs[len(reqs)-1]
	if r.Path != tokenPath || r.MetadataFlavor != "Google" {
		t.Errorf("request = %+v", r)
	}
	if got := r.Query.Get("scopes"); got != strings.Join(gcp.Scopes, ",") {
		t.Errorf("scopes = %q", got)
	}
}

// TestControllerWorkloadIdentityFederation is the controller's own
// identity on a cluster that is not GKE: GOOGLE_APPLICATION_CREDENTIALS
// names an external_account configuration (as `gcloud iam
// workload-identity-pools create-cred-config` writes it) whose subject
// token is the controller's projected ServiceAccount token, for the
// provider's audience. Application default credentials exchange it at
// Google STS and impersonate the Google service account; the metadata
// server is never asked, and a second token is the cache's.
func TestControllerWorkloadIdentityFederation(t *testing.T) {
	fake, p := setup(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	const (
		wip   = "projects/123456/locations/global/workloadIdentityPools/weir/providers/kind"
		email = "flux@weir-project.iam.gserviceaccount.com"
	)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "weir-controller"}}
	env.Create(t, sa)
	req := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{"//iam.googleapis.com/" + wip}}}
	if err := env.Client.SubResource("token").Create(context.Background(), sa, req); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokenFile, credsFile := filepath.Join(dir, "token"), filepath.Join(dir, "credentials.json")
	creds, err := json.Marshal(map[string]any{
		"type": "external_account", "audience": "//iam.googleapis.com/" + wip,
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": fake.URL + "/v1/token",
		"service_account_impersonation_url": fake.URL + "/v1/projects/-/serviceAccounts/" + email + ":generateAccessToken",
		"credential_source":                 map[string]any{"file": tokenFile, "format": map[string]string{"type": "text"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string][]byte{tokenFile: []byte(req.Status.Token), credsFile: creds} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", credsFile)

	s := &auth.Settings{Cache: auth.NewCache(10, time.Hour)}
	for range 2 {
		tok, err := p.AccessToken(context.Background(), auth.Identity{}, s)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Value != gcpfake.ImpersonatedToken(email) {
			t.Fatalf("token = %q, want %s's", tok.Value, email)
		}
	}
	if n := fake.Count("/computeMetadata/"); n != 0 {
		t.Errorf("%d metadata server requests, want none", n)
	}
	assertRequests(t, fake, ns, "testdata/controller-workload-identity-federation.json")
}

// TestServiceAccountTokens exchanges the tokens of two ServiceAccounts of
// a GKE cluster: one annotated with a Google service account
// (impersonated), one not (the federated token itself). The fake's record
// of what was sent is the golden file.
func TestServiceAccountTokens(t *testing.T) {
	fake, p := setup(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	const email = "tenant-a@weir-project.iam.gserviceaccount.com"
	createSA(t, env, ns, "tenant-a", map[string]string{gcp.ServiceAccountAnnotation: email})
	createSA(t, env, ns, "tenant-b", nil)
	s := &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}

	want := map[string]string{
		"tenant-a": gcpfake.ImpersonatedToken(email),
		"tenant-b": gcpfake.FederatedToken(satoken.ServiceAccount(ns, "tenant-b")),
	}
	for _, round := range []int{1, 2} {
		for _, name := range []string{"tenant-a", "tenant-b"} {
			id, err := s.IdentityFor(ns, name)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := p.AccessToken(ctx, id, s)
			if err != nil {
				t.Fatalf("round %d, %s: %v", round, name, err)
			}
			if tok.Value != want[name] {
				t.Errorf("round %d, %s: token %q, want %q", round, name, tok.Value, want[name])
			}
		}
	}
	assertRequests(t, fake, ns, "testdata/serviceaccounts.json")
}

// TestWorkloadIdentityProvider is a cluster that is not GKE: the
// ServiceAccount names the provider, which is both audiences, and the
// metadata server is never asked.
func TestWorkloadIdentityProvider(t *testing.T) {
	fake, p := setup(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	const wip = "projects/123456/locations/global/workloadIdentityPools/weir/providers/kind"
	createSA(t, env, ns, "tenant", map[string]string{gcp.WorkloadIdentityProviderAnnotation: wip})
	s := &auth.Settings{ObjectLevel: true, Client: env.Client}
	id, _ := s.IdentityFor(ns, "tenant")
	tok, err := p.RegistryLogin(context.Background(), "europe-west1-docker.pkg.dev", id, s)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Username != "oauth2accesstoken" || tok.Value != gcpfake.FederatedToken(satoken.ServiceAccount(ns, "tenant")) {
		t.Errorf("login = %s / %q", tok.Username, tok.Value)
	}
	assertRequests(t, fake, ns, "testdata/workload-identity-provider.json")
}

func TestServiceAccountErrors(t *testing.T) {
	fake, p := setup(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	const denied = "denied@weir-project.iam.gserviceaccount.com"
	fake.Deny(denied)
	createSA(t, env, ns, "bad-email", map[string]string{gcp.ServiceAccountAnnotation: "someone@example.com"})
	createSA(t, env, ns, "bad-wip", map[string]string{gcp.WorkloadIdentityProviderAnnotation: "pools/x"})
	createSA(t, env, ns, "denied", map[string]string{gcp.ServiceAccountAnnotation: denied})
	s := &auth.Settings{ObjectLevel: true, Client: env.Client}
	tests := []struct{ sa, want string }{
		{"bad-email", "failed to get provider identity from service account '" + ns + "/bad-email' annotations: invalid iam.gke.io/gcp-service-account annotation: 'someone@example.com'. must match ^[a-zA-Z0-9-]{1,100}@[a-zA-Z0-9-]{1,100}\\.iam\\.gserviceaccount\\.com$"},
		{"bad-wip", "failed to get provider identity from service account '" + ns + "/bad-wip' annotations: invalid gcp.auth.fluxcd.io/workload-identity-provider annotation: 'pools/x'. must match ^projects/\\d{1,30}/locations/global/workloadIdentityPools/[^/]{1,100}/providers/[^/]{1,100}$"},
		{"denied", "failed to create access token for serviceaccount/" + ns + "/denied (Google STS, then IAM Credentials generateAccessToken for " + denied + "): "},
		{"missing", "failed to get service account '" + ns + "/missing'"},
	}
	for _, tt := range tests {
		t.Run(tt.sa, func(t *testing.T) {
			id, _ := s.IdentityFor(ns, tt.sa)
			_, err := p.AccessToken(context.Background(), id, s)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant prefix %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "ya29.") || strings.Contains(err.Error(), "eyJ") {
				t.Errorf("the error carries a token: %v", err)
			}
		})
	}
}

func TestParseRegistry(t *testing.T) {
	tests := []struct {
		host string
		ok   bool
	}{
		{"gcr.io", true},
		{"eu.gcr.io", true},
		{"europe-west1-docker.pkg.dev", true},
		{"docker.pkg.dev", false},
		{"ghcr.io", false},
		{"127.0.0.1:5000", false},
	}
	for _, tt := range tests {
		err := gcp.ParseRegistry(tt.host)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v", tt.host, err)
		}
	}
	want := `invalid GCP registry: 'ghcr.io'. must match ^(((.+\.)?gcr\.io)|(.+-docker\.pkg\.dev))$`
	if err := gcp.ParseRegistry("ghcr.io"); err == nil || err.Error() != want {
		t.Errorf("err = %v", err)
	}
}

func createSA(t *testing.T, env *testenv.Env, ns, name string, annotations map[string]string) {
	env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}})
}

// assertRequests compares the fake's record with a golden file, the
// test's namespace written NAMESPACE.
func assertRequests(t *testing.T, fake *gcpfake.Server, ns, path string) {
	t.Helper()
	out, err := json.MarshalIndent(fake.Requests(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, path, []byte(strings.ReplaceAll(string(out), ns, "NAMESPACE")+"\n"))
}
