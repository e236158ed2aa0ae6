package render_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getsops/sops/v3/hcvault"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/vault"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/vaulttransit"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
	"github.com/weir-gitops/weir/internal/kustomize/render"
)

// TestDecryptionWithVaultServiceAccounts renders Kustomizations whose
// spec.decryption names two ServiceAccounts of the real API server
// against a Vault transit file, with --sops-vault-configmap listing the
// fake: each build logs in as role <namespace>_<name> with its
// ServiceAccount's token (audience the Vault address, checked by a
// TokenReview), and the transit calls carry the token its own login
// returned; a third build reuses tenant-a's cached token. The lockdown
// default ServiceAccount logs in the same way; the gate off refuses the
// field before anything is asked.
func TestDecryptionWithVaultServiceAccounts(t *testing.T) {
	env, ns, fake, root, opts := vaultWithLogin(t, "tenant-a", "tenant-b", "locked-down")
	settings := opts.Identity

	decryptAs(t, env.Client, ns, root, opts, "tenant-a", "tenant-b", "tenant-a")
	locked := *settings
	locked.DefaultServiceAccount = "locked-down"
	lockedOpts := opts
	lockedOpts.Identity = &locked
	if _, err := render.Kustomization(context.Background(), env.Client, sopsKustomization(ns, "plain", kustomizev1.Decryption{}), root, lockedOpts); err != nil {
		t.Fatalf("lockdown default: %v", err)
	}

	logins := map[string]int{}
	for _, r := range fake.Logins() {
		if r.Status != 200 || r.Login.Subject != satoken.ServiceAccount(ns, strings.TrimPrefix(r.Login.Role, ns+"_")) || !slices.Contains(r.Login.Audience, fake.URL) {
			t.Errorf("login %+v: %+v", r, r.Login)
		}
		logins[r.Login.Role]++
	}
	for _, sa := range []string{"tenant-a", "tenant-b", "locked-down"} {
		if logins[ns+"_"+sa] != 1 {
			t.Errorf("logins of %s: %d, want 1 (then cached): %v", sa, logins[ns+"_"+sa], logins)
		}
	}
	decrypts := map[string]int{}
	tokens := map[string]string{}
	for _, r := range fake.Requests() {
		if r.Path == "/v1/transit/decrypt/tenants" && r.Status == 200 {
			decrypts[r.TokenRole]++
			if prev, ok := tokens[r.TokenRole]; ok && prev != r.Token {
				t.Errorf("%s decrypted with two tokens", r.TokenRole)
			}
			tokens[r.TokenRole] = r.Token
		}
	}
	if decrypts[ns+"_tenant-a"] != 2 || decrypts[ns+"_tenant-b"] != 1 || decrypts[ns+"_locked-down"] != 1 || len(decrypts) != 3 {
		t.Errorf("transit decrypts by the role of their token: %v, want tenant-a twice, tenant-b and locked-down once", decrypts)
	}
	if tokens[ns+"_tenant-a"] == tokens[ns+"_tenant-b"] {
		t.Error("two ServiceAccounts decrypted with one Vault token")
	}

	// The gate off: the field is refused before any login.
	gateOff := opts
	gateOff.Identity = &auth.Settings{Client: env.Client}
	before := len(fake.Requests())
	_, err := render.Kustomization(context.Background(), env.Client, sopsKustomization(ns, "off", kustomizev1.Decryption{ServiceAccountName: "tenant-a"}), root, gateOff)
	if err == nil || !strings.Contains(err.Error(), "please enable the ObjectLevelWorkloadIdentity feature gate") || len(fake.Requests()) != before {
		t.Errorf("gate off: err = %v, %d requests", err, len(fake.Requests())-before)
	}
}

// TestDecryptionLogsInAgainWhenVaultRefusesTheToken: a cached login token
// Vault revoked is answered 403 by transit; the build forgets it, logs in
// once more and decrypts with the new token. When transit refuses the new
// login's token too (the role's policies do not cover the key), the build
// fails after that one new login, saying so, with no token in the error.
func TestDecryptionLogsInAgainWhenVaultRefusesTheToken(t *testing.T) {
	env, ns, fake, root, opts := vaultWithLogin(t, "tenant")
	role := ns + "_tenant"
	build := func(name string) error {
		_, err := render.Kustomization(context.Background(), env.Client, sopsKustomization(ns, name, kustomizev1.Decryption{ServiceAccountName: "tenant"}), root, opts)
		return err
	}
	// decrypts are the transit decrypt calls after the first n requests,
	// as "<status> <token>".
	decrypts := func(n int) []string {
		var out []string
		for _, r := range fake.Requests()[n:] {
			if r.Path == "/v1/transit/decrypt/tenants" {
				out = append(out, fmt.Sprint(r.Status, " ", r.Token))
			}
		}
		return out
	}

	if err := build("first"); err != nil {
		t.Fatal(err)
	}
	first := decrypts(0)
	if len(first) != 1 || len(fake.Logins()) != 1 {
		t.Fatalf("first build: decrypts %q, %d logins; want one of each", first, len(fake.Logins()))
	}
	cached := strings.TrimPrefix(first[0], "200 ")
	fake.Revoke(cached)

	before := len(fake.Requests())
	if err := build("revoked"); err != nil {
		t.Fatalf("after the cached token was revoked: %v", err)
	}
	got := decrypts(before)
	if len(got) != 2 || got[0] != "403 "+cached || !strings.HasPrefix(got[1], "200 ") || got[1] == "200 "+cached || len(fake.Logins()) != 2 {
		t.Errorf("revoked: decrypts %q and %d logins, want 403 with the cached token, one new login, 200 with its token", got, len(fake.Logins()))
	}

	fake.Deny(role)
	before = len(fake.Requests())
	err := build("denied")
	want := "hcvault key " + fake.URL + "/transit/tenants: HashiCorp Vault transit: permission denied (HTTP 403) twice, " +
		"for the login's token and for a new login's: the Vault role of the login has no policy allowing this key"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("denied: err = %v, want %q", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "hvs.") {
		t.Errorf("a token leaked into %q", err)
	}
	if got := decrypts(before); len(got) != 2 || len(fake.Logins()) != 3 {
		t.Errorf("denied: decrypts %q and %d logins, want two refused and one new login (3 in all)", got, len(fake.Logins()))
	}
}

// vaultWithLogin is a Vault transit fake whose Kubernetes login binds a
// role to each ServiceAccount (created in a new namespace), a source with
// a Secret encrypted by it, and render options listing it in the
// --sops-vault-configmap ConfigMap, with object-level identity on.
func vaultWithLogin(t *testing.T, serviceAccounts ...string) (*testenv.Env, string, *vaulttransit.Server, string, render.Options) {
	t.Helper()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := vaulttransit.New(t, "hvs.author")
	fake.EnableLogin("auth/kubernetes/login", 3600, vaulttransit.TokenReview(env.Client, fake.URL))
	for _, sa := range serviceAccounts {
		env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})
		fake.AddRole(ns+"_"+sa, vaulttransit.Role{Subject: satoken.ServiceAccount(ns, sa), Audience: fake.URL})
	}
	env.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sops-vault-config"},
		Data: map[string]string{vault.ConfigKey: "instances:\n- address: " + fake.URL + "\n  loginPath: auth/kubernetes/login\n"}})
	key, err := hcvault.NewMasterKeyFromURI(fake.URL + "/v1/transit/keys/tenants")
	if err != nil {
		t.Fatal(err)
	}
	root := sourceWith(t, encryptWith(t, map[string][]byte{decrypt.VaultTokenKey: []byte("hvs.author")}, decrypt.Options{}, key))
	opts := render.Options{Identity: &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)},
		SOPSVaultConfigMap: &client.ObjectKey{Namespace: ns, Name: "sops-vault-config"}}
	return env, ns, fake, root, opts
}
