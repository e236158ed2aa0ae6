package vault_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/vault"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/vaulttransit"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m, testenv.APIServerOnly)
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    []vault.Instance
		wantErr string
	}{
		{name: "Flux's example", data: map[string]string{vault.ConfigKey: "instances:\n  - address: https://vault.example.com:8200\n    loginPath: auth/kubernetes/login\n"},
			want: []vault.Instance{{Address: "https://vault.example.com:8200", LoginPath: "auth/kubernetes/login"}}},
		{name: "two instances, slashes trimmed", data: map[string]string{vault.ConfigKey: `instances:
- address: https://bao.example.com/
  loginPath: /auth/jwt/login
- address: http://127.0.0.1:8200
  loginPath: ns1/auth/k8s-east/login
`}, want: []vault.Instance{{Address: "https://bao.example.com", LoginPath: "auth/jwt/login"}, {Address: "http://127.0.0.1:8200", LoginPath: "ns1/auth/k8s-east/login"}}},
		{name: "no instances", data: map[string]string{vault.ConfigKey: "instances: []\n"}, want: []vault.Instance{}},
		{name: "no config.yaml", data: map[string]string{"config.yml": "instances: []"}, wantErr: "no config.yaml key"},
		{name: "unknown field", data: map[string]string{vault.ConfigKey: "instances:\n- address: https://v\n  loginPath: auth/x/login\n  caFile: /ca.pem\n"}, wantErr: `unknown field "caFile"`},
		{name: "not a URL", data: map[string]string{vault.ConfigKey: "instances:\n- address: vault.example.com\n  loginPath: auth/x/login\n"}, wantErr: "instance 0: address 'vault.example.com' is not an http or https URL"},
		{name: "no login path", data: map[string]string{vault.ConfigKey: "instances:\n- address: https://v\n"}, wantErr: "instance 0 (https://v): loginPath is required"},
		{name: "listed twice", data: map[string]string{vault.ConfigKey: "instances:\n- {address: https://v, loginPath: a/login}\n- {address: https://v/, loginPath: b/login}\n"}, wantErr: "address 'https://v' is listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := vault.ParseConfig(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				tt.want = []vault.Instance{}
			}
			got := c.Instances
			if got == nil {
				got = []vault.Instance{}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("instances (-want +got):\n%s", d)
			}
			for _, in := range tt.want {
				if found, ok := c.Instance(in.Address + "/"); !ok || found != in {
					t.Errorf("Instance(%s/) = %v, %v", in.Address, found, ok)
				}
			}
		})
	}
}

// TestLoginWithServiceAccounts logs two ServiceAccounts of the real API
// server in to the fake, which checks each token with a TokenReview for
// the Vault address as audience: each gets its own Vault token, as role
// <namespace>_<name>; a second login is the cached token until four
// fifths of the lease have passed. A ServiceAccount without a role is
// refused with Vault's message and no token in the error; the controller
// logs in as the ServiceAccount its mounted token names.
func TestLoginWithServiceAccounts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := vaulttransit.New(t)
	fake.EnableLogin("auth/kubernetes/login", 2, vaulttransit.TokenReview(env.Client, fake.URL))
	for _, sa := range []string{"tenant-a", "tenant-b", "unbound", "weir-controller"} {
		env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})
	}
	for _, sa := range []string{"tenant-a", "tenant-b", "weir-controller"} {
		fake.AddRole(ns+"_"+sa, vaulttransit.Role{Subject: satoken.ServiceAccount(ns, sa), Audience: fake.URL})
	}
	in := vault.Instance{Address: fake.URL, LoginPath: "auth/kubernetes/login"}
	s := &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}
	login := func(sa string) (auth.Token, error) {
		t.Helper()
		id, err := s.IdentityFor(ns, sa)
		if err != nil {
			t.Fatal(err)
		}
		return vault.Default.Login(context.Background(), s, id, in)
	}

	a, err := login("tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := login("tenant-b")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := login("tenant-a")
	if a.Value == b.Value || again.Value != a.Value {
		t.Errorf("tokens a=%s b=%s a again=%s: want two, the second login of a cached", a.Value, b.Value, again.Value)
	}
	if until := time.Until(a.ExpiresAt); until <= 0 || until > 2*time.Second {
		t.Errorf("token expires in %s, want the 2s lease", until)
	}
	var got []vaulttransit.Login
	for _, r := range fake.Logins() {
		if r.Method != "PUT" || r.Path != "/v1/auth/kubernetes/login" || r.Status != 200 {
			t.Errorf("login request %+v", r)
		}
		got = append(got, *r.Login)
	}
	want := []vaulttransit.Login{
		{Role: ns + "_tenant-a", Subject: satoken.ServiceAccount(ns, "tenant-a"), Audience: []string{fake.URL}},
		{Role: ns + "_tenant-b", Subject: satoken.ServiceAccount(ns, "tenant-b"), Audience: []string{fake.URL}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("logins (-want +got):\n%s", d)
	}

	time.Sleep(1700 * time.Millisecond)
	if renewed, _ := login("tenant-a"); renewed.Value == a.Value || len(fake.Logins()) != 3 {
		t.Errorf("after four fifths of the lease: token %s, %d logins; want a new login", renewed.Value, len(fake.Logins()))
	}

	_, err = login("unbound")
	if err == nil || !strings.Contains(err.Error(), "vault login at "+fake.URL+"/v1/auth/kubernetes/login as role '"+ns+"_unbound' failed: HTTP 400: invalid role name") {
		t.Errorf("unbound: err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "hvs.") {
		t.Errorf("a token leaked into %q", err)
	}

	// The controller's identity: its own ServiceAccount, named by the
	// subject of its mounted token.
	tokenFile := filepath.Join(t.TempDir(), "token")
	own, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": satoken.ServiceAccount(ns, "weir-controller")}).SignedString([]byte("k"))
	if err := os.WriteFile(tokenFile, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	saved := auth.ControllerTokenFile
	auth.ControllerTokenFile = tokenFile
	t.Cleanup(func() { auth.ControllerTokenFile = saved })
	if _, err := vault.Default.Login(context.Background(), s, auth.Identity{}, in); err != nil {
		t.Fatal(err)
	}
	logins := fake.Logins()
	if last := logins[len(logins)-1]; last.Status != 200 || last.Login.Role != ns+"_weir-controller" {
		t.Errorf("controller login %+v %+v", last, last.Login)
	}
}

// TestLoginOverTLS logs in to the fake served over HTTPS with the TLS
// settings of the controller's environment, the ones SOPS's transit
// client reads (hashicorp/vault/api's): the CA as a file or a directory,
// verification skipped, a client certificate for a listener that requires
// one. Without them the login fails naming its call and the TLS error,
// with no token in the message.
func TestLoginOverTLS(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}})
	plain, mutual := vaulttransit.NewTLS(t, vaulttransit.TLS{}), vaulttransit.NewTLS(t, vaulttransit.TLS{RequireClientCert: true})
	for _, fake := range []*vaulttransit.Server{plain, mutual} {
		fake.EnableLogin("auth/kubernetes/login", 3600, vaulttransit.TokenReview(env.Client, fake.URL))
		fake.AddRole(ns+"_tenant", vaulttransit.Role{Subject: satoken.ServiceAccount(ns, "tenant"), Audience: fake.URL})
	}
	caDir := t.TempDir()
	ca, err := os.ReadFile(plain.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(caDir, "vault-ca.pem"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		fake    *vaulttransit.Server
		env     map[string]string
		wantErr string
		// wantCert is whether the login presented a client certificate.
		wantCert bool
	}{
		{name: "system roots only", fake: plain, wantErr: "x509: certificate signed by unknown authority"},
		{name: "VAULT_CACERT", fake: plain, env: map[string]string{"VAULT_CACERT": plain.CAFile}},
		{name: "VAULT_CAPATH", fake: plain, env: map[string]string{"VAULT_CAPATH": caDir}},
		{name: "VAULT_SKIP_VERIFY", fake: plain, env: map[string]string{"VAULT_SKIP_VERIFY": "true"}},
		{name: "VAULT_CACERT missing", fake: plain, env: map[string]string{"VAULT_CACERT": filepath.Join(caDir, "missing.pem")},
			wantErr: "configuring the Vault client from the environment"},
		{name: "client certificate required, none given", fake: mutual, env: map[string]string{"VAULT_CACERT": mutual.CAFile},
			wantErr: "certificate required"},
		{name: "VAULT_CLIENT_CERT and VAULT_CLIENT_KEY", fake: mutual, wantCert: true,
			env: map[string]string{"VAULT_CACERT": mutual.CAFile, "VAULT_CLIENT_CERT": mutual.CertFile, "VAULT_CLIENT_KEY": mutual.KeyFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"VAULT_CACERT", "VAULT_CAPATH", "VAULT_SKIP_VERIFY", "VAULT_CLIENT_CERT", "VAULT_CLIENT_KEY", "VAULT_TOKEN"} {
				t.Setenv(k, tt.env[k])
			}
			s := &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}
			id, err := s.IdentityFor(ns, "tenant")
			if err != nil {
				t.Fatal(err)
			}
			before := len(tt.fake.Logins())
			tok, err := vault.Default.Login(context.Background(), s, id, vault.Instance{Address: tt.fake.URL, LoginPath: "auth/kubernetes/login"})
			if tt.wantErr != "" {
				prefix := "vault login at " + tt.fake.URL + "/v1/auth/kubernetes/login"
				if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q starting %q", err, tt.wantErr, prefix)
				}
				if strings.Contains(err.Error(), "hvs.") || strings.Contains(err.Error(), "eyJ") {
					t.Errorf("a token leaked into %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			logins := tt.fake.Logins()
			if len(logins) != before+1 || logins[len(logins)-1].Status != 200 || tok.Value == "" {
				t.Fatalf("logins %+v, token %q: want one answered", logins[before:], tok.Value)
			}
			if last := logins[len(logins)-1]; last.ClientCert != tt.wantCert || last.Token != "" {
				t.Errorf("login presented a client certificate: %v, want %v; X-Vault-Token %q, want none", last.ClientCert, tt.wantCert, last.Token)
			}
		})
	}
}
