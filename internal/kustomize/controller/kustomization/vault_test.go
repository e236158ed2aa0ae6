package kustomization

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/hcvault"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth/vault"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/vaulttransit"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// TestSOPSVaultWorkloadIdentity commits Secrets encrypted with two Vault
// transit fakes and lists one of them in --sops-vault-configmap. A
// Kustomization whose decryption Secret holds no sops.vault-token
// decrypts through a login with the controller's own ServiceAccount token
// (role default_weir-controller, audience the Vault address, checked by a
// TokenReview against the real API server), and every transit call
// carries the token that login returned; a rebuild at a new revision
// makes no second login. The unlisted address fails Ready with a message
// naming it and no token; a sops.vault-token in the Secret wins over the
// login.
func TestSOPSVaultWorkloadIdentity(t *testing.T) {
	listed, unlisted := vaulttransit.New(t, "hvs.author"), vaulttransit.New(t, "hvs.author")
	f, sha := vaultFixture(t, listed, unlisted)
	role := controllerSA.Namespace + "_" + controllerSA.Name

	k := f.kustomization("vault", "./listed", func(spec *kustomizev1.KustomizationSpec) {
		spec.NamePrefix = "listed-"
		spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS}
	})
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	f.wantPassword("listed-db", "from-listed")

	logins := listed.Logins()
	if len(logins) != 1 || logins[0].Status != 200 || logins[0].Path != "/v1/auth/kubernetes/login" {
		t.Fatalf("logins %+v, want one answered at /v1/auth/kubernetes/login", logins)
	}
	want := vaulttransit.Login{Role: role, Subject: satoken.ServiceAccount(controllerSA.Namespace, controllerSA.Name), Audience: []string{listed.URL}}
	if got := *logins[0].Login; got.Role != want.Role || got.Subject != want.Subject || len(got.Audience) != 1 || got.Audience[0] != want.Audience[0] {
		t.Errorf("login presented %+v, want %+v", got, want)
	}
	transitDecrypts := func() int {
		n := 0
		for _, r := range listed.Requests() {
			if r.Path == "/v1/transit/decrypt/fleet" {
				n++
				if r.TokenRole != role || r.Status != 200 {
					t.Errorf("transit decrypt %+v, want the login's token", r)
				}
			}
		}
		return n
	}
	first := transitDecrypts()

	// A new revision rebuilds and decrypts again, with the cached token.
	sha = f.push(gitserver.Commit{Files: map[string]string{"listed/extra.yaml": configMapYAML("extra", "k", "v")}, Message: "extra"})
	f.env.RequestReconcile(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	if n := transitDecrypts(); n <= first {
		t.Errorf("transit decrypts %d after the rebuild, %d before: the second build did not decrypt", n, first)
	}
	if n := len(listed.Logins()); n != 1 {
		t.Errorf("%d logins after a second reconcile, want 1 (cached until the lease ends)", n)
	}

	// An address the ConfigMap does not list gets no token and a message.
	bad := f.kustomization("unlisted", "./unlisted", func(spec *kustomizev1.KustomizationSpec) {
		spec.NamePrefix = "unlisted-"
		spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS}
	})
	f.env.Create(t, bad)
	ready := f.waitFailed(bad, "main@sha1:"+sha, meta.BuildFailedReason)
	if wantMsg := "Vault address '" + unlisted.URL + "' is not listed in --sops-vault-configmap ConfigMap '" + sopsVaultConfigMap.String() + "'"; !strings.Contains(ready.Message, wantMsg) ||
		!strings.Contains(ready.Message, "decryption failed for 'Secret/") {
		t.Errorf("Ready message %q does not say %q", ready.Message, wantMsg)
	}
	if strings.Contains(ready.Message, "hvs.") || strings.Contains(ready.Message, "eyJ") {
		t.Errorf("a token leaked into %q", ready.Message)
	}
	if n := len(unlisted.Requests()); n != 1 { // the author's encrypt only
		t.Errorf("the unlisted Vault got %d requests, want only the author's", n)
	}

	// The decryption Secret's token comes first: no login.
	f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-token", Namespace: f.ns},
		Data: map[string][]byte{decrypt.VaultTokenKey: []byte("hvs.author")}})
	withToken := f.kustomization("unlisted-token", "./unlisted", func(spec *kustomizev1.KustomizationSpec) {
		spec.NamePrefix = "token-"
		spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS, SecretRef: &meta.LocalObjectReference{Name: "vault-token"}}
	})
	f.env.Create(t, withToken)
	f.waitApplied(withToken, "main@sha1:"+sha)
	f.wantPassword("token-db", "from-unlisted")
	if n := len(unlisted.Logins()); n != 0 {
		t.Errorf("%d logins with a sops.vault-token in the Secret, want none", n)
	}
}

// vaultFixture is a fixture whose repository holds a Secret encrypted by
// each fake (./listed, ./unlisted), the controller's ServiceAccount, and
// --sops-vault-configmap listing the first fake, whose login accepts the
// controller's role.
func vaultFixture(t *testing.T, listed, unlisted *vaulttransit.Server) (*fixture, string) {
	t.Helper()
	files := map[string]string{}
	for dir, fake := range map[string]*vaulttransit.Server{"listed": listed, "unlisted": unlisted} {
		key, err := hcvault.NewMasterKeyFromURI(fake.URL + "/v1/transit/keys/fleet")
		if err != nil {
			t.Fatal(err)
		}
		files[dir+"/secret.yaml"] = encryptedSecret(t, "db", "from-"+dir, map[string][]byte{decrypt.VaultTokenKey: []byte("hvs.author")}, key)
	}
	f, sha := newFixture(t, files)
	listed.EnableLogin("auth/kubernetes/login", 3600, vaulttransit.TokenReview(f.env.Client, listed.URL))
	listed.AddRole(controllerSA.Namespace+"_"+controllerSA.Name,
		vaulttransit.Role{Subject: satoken.ServiceAccount(controllerSA.Namespace, controllerSA.Name), Audience: listed.URL})
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: controllerSA.Namespace, Name: controllerSA.Name}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: sopsVaultConfigMap.Namespace, Name: sopsVaultConfigMap.Name},
		Data: map[string]string{vault.ConfigKey: "instances:\n  - address: " + listed.URL + "\n    loginPath: auth/kubernetes/login\n"}}
	for _, o := range []client.Object{sa, cm} {
		if err := f.env.Client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.env.Client.Delete(context.Background(), o) })
	}
	return f, sha
}

// wantPassword checks the applied Secret's decrypted password.
func (f *fixture) wantPassword(name, want string) {
	f.t.Helper()
	var secret corev1.Secret
	if err := f.env.Client.Get(context.Background(), clientKey(f.ns, name), &secret); err != nil {
		f.t.Fatal(err)
	}
	if got := string(secret.Data["password"]); got != want {
		f.t.Errorf("%s: password = %q, want %q", name, got, want)
	}
}

// TestSOPSVaultObjectLevelIdentity: a controller with the
// ObjectLevelWorkloadIdentity gate on (its own manager, as a new process
// starts it; the tests' main controller has the gate off and stalls these
// objects) reconciles two Kustomizations naming two ServiceAccounts: each
// logs in to Vault as its own role with its own ServiceAccount's token,
// and the transit calls of each carry a token of its own.
func TestSOPSVaultObjectLevelIdentity(t *testing.T) {
	listed, unlisted := vaulttransit.New(t, "hvs.author"), vaulttransit.New(t, "hvs.author")
	f, _ := vaultFixture(t, listed, unlisted)
	var r *Reconciler
	if err := testenv.StartManager(t.Context(), f.env, func(mgr ctrl.Manager) error {
		r = newReconciler(mgr, Options{})
		r.Identity.ObjectLevel = true
		return r.WatchHealth(mgr)
	}); err != nil {
		t.Fatal(err)
	}
	tenants := []string{"tenant-a", "tenant-b"}
	for _, sa := range tenants {
		f.env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: sa}})
		listed.AddRole(f.ns+"_"+sa, vaulttransit.Role{Subject: satoken.ServiceAccount(f.ns, sa), Audience: listed.URL})
		k := f.kustomization(sa, "./listed", func(spec *kustomizev1.KustomizationSpec) {
			spec.NamePrefix = sa + "-"
			spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS, ServiceAccountName: sa}
		})
		f.env.Create(t, k)
		testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
			// A run may end without an error before it applied (a
			// finalizer added, a source not yet in the cache): run again
			// until the decrypted Secret is there.
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(k)}); err != nil {
				return false, err.Error()
			}
			err := f.env.Client.Get(ctx, clientKey(f.ns, sa+"-db"), &corev1.Secret{})
			return err == nil, fmt.Sprint(err)
		})
		f.wantPassword(sa+"-db", "from-listed")
	}
	roles := map[string]int{}
	for _, l := range listed.Logins() {
		if l.Status == 200 {
			roles[l.Login.Role]++
			if sa := strings.TrimPrefix(l.Login.Role, f.ns+"_"); l.Login.Subject != satoken.ServiceAccount(f.ns, sa) {
				t.Errorf("role %s logged in with %s's token", l.Login.Role, l.Login.Subject)
			}
		}
	}
	tokens := map[string]string{}
	for _, req := range listed.Requests() {
		if req.Path == "/v1/transit/decrypt/fleet" && req.Status == 200 {
			tokens[req.TokenRole] = req.Token
		}
	}
	for _, sa := range tenants {
		if roles[f.ns+"_"+sa] != 1 || tokens[f.ns+"_"+sa] == "" {
			t.Errorf("%s: %d logins and transit token %q; logins %v", sa, roles[f.ns+"_"+sa], tokens[f.ns+"_"+sa], roles)
		}
	}
	if tokens[f.ns+"_tenant-a"] == tokens[f.ns+"_tenant-b"] {
		t.Error("two ServiceAccounts decrypted with one Vault token")
	}
}

// TestSOPSVaultLoginOverTLS serves the listed Vault over HTTPS. Without
// VAULT_CACERT in the controller's environment the login fails, before
// any transit call: Ready=False naming the login call and the TLS error,
// with no token. With VAULT_CACERT, the file SOPS's transit client also
// trusts, the next reconcile logs in and decrypts.
func TestSOPSVaultLoginOverTLS(t *testing.T) {
	listed := vaulttransit.NewTLS(t, vaulttransit.TLS{}, "hvs.author")
	t.Setenv("VAULT_CACERT", listed.CAFile) // the author's encryption
	f, sha := vaultFixture(t, listed, vaulttransit.New(t, "hvs.author"))
	t.Setenv("VAULT_CACERT", "")

	k := f.kustomization("vault-tls", "./listed", func(spec *kustomizev1.KustomizationSpec) {
		spec.NamePrefix = "tls-"
		spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS}
	})
	f.env.Create(t, k)
	ready := f.waitFailed(k, "main@sha1:"+sha, meta.BuildFailedReason)
	wantMsg := "vault login at " + listed.URL + "/v1/auth/kubernetes/login as role '" + controllerSA.Namespace + "_" + controllerSA.Name + "'"
	if !strings.Contains(ready.Message, wantMsg) || !strings.Contains(ready.Message, "x509: certificate signed by unknown authority") {
		t.Errorf("Ready message %q, want it to name %q and the TLS error", ready.Message, wantMsg)
	}
	if strings.Contains(ready.Message, "hvs.") || strings.Contains(ready.Message, "eyJ") {
		t.Errorf("a token leaked into %q", ready.Message)
	}
	if n := len(listed.Requests()); n != 1 { // the author's encrypt only
		t.Errorf("the Vault answered %d requests, want only the author's", n)
	}

	t.Setenv("VAULT_CACERT", listed.CAFile)
	f.env.RequestReconcile(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	f.wantPassword("tls-db", "from-listed")
	if logins := listed.Logins(); len(logins) != 1 || logins[0].Status != 200 {
		t.Errorf("logins %+v, want one answered", logins)
	}
}
