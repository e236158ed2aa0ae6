package render_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/getsops/sops/v3/azkv"
	sopsgcpkms "github.com/getsops/sops/v3/gcpkms"
	"github.com/getsops/sops/v3/keys"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/auth"
	authazure "github.com/weir-gitops/weir/internal/auth/azure"
	authgcp "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurekv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpkms"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
	"github.com/weir-gitops/weir/internal/kustomize/render"
)

const gcpKey = "projects/weir-project/locations/global/keyRings/tenants/cryptoKeys/sops"

// encryptWith encrypts a Secret manifest to key with an author's
// decryption Secret, the way `sops -e` would.
func encryptWith(t *testing.T, creds map[string][]byte, opts decrypt.Options, key keys.MasterKey) []byte {
	t.Helper()
	author, err := decrypt.New(creds, opts)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := author.EncryptYAMLTo([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: tenant-value\n"),
		[]keys.MasterKey{key})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestDecryptionWithGCPServiceAccounts renders two Kustomizations whose
// spec.decryption names two ServiceAccounts of the real API server, each
// annotated with its Google service account, against a GCP KMS file: each
// build's ServiceAccount token (audience the GKE workload identity pool)
// is exchanged at Google STS and then impersonates its Google service
// account, and GCP KMS sees that account's access token, one per
// ServiceAccount. A third build reuses the cached token.
func TestDecryptionWithGCPServiceAccounts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	google := gcpfake.Start(t, gcpfake.Options{})
	google.Install(t)
	kms := gcpkms.New(t)
	t.Setenv(gcpkms.ClientTypeEnv, "rest")
	t.Setenv(gcpkms.EndpointEnv, kms.URL)

	emails := map[string]string{"tenant-a": "tenant-a@weir-project.iam.gserviceaccount.com", "tenant-b": "tenant-b@weir-project.iam.gserviceaccount.com"}
	for sa, email := range emails {
		kms.Accept(gcpfake.ImpersonatedToken(email), email)
		env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa,
			Annotations: map[string]string{authgcp.ServiceAccountAnnotation: email}}})
	}
	root := sourceWith(t, encryptWith(t, map[string][]byte{decrypt.GCPKMSKey: kms.AddServiceAccount(t, "author@weir-project.iam.gserviceaccount.com")},
		decrypt.Options{}, sopsgcpkms.NewMasterKeyFromResourceID(gcpKey)))
	opts := render.Options{Identity: &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}}

	decryptAs(t, env.Client, ns, root, opts, "tenant-a", "tenant-b", "tenant-a")
	principals := map[string]int{}
	for _, r := range kms.Requests() {
		if r.Operation == "decrypt" && r.Status == http.StatusOK {
			principals[r.Principal]++
		}
	}
	if principals[emails["tenant-a"]] != 2 || principals[emails["tenant-b"]] != 1 || len(principals) != 2 {
		t.Errorf("GCP KMS decrypted for %v, want tenant-a's account twice and tenant-b's once", principals)
	}
	subjects := map[string]int{}
	for _, r := range google.Requests() {
		if r.Path == "/v1/token" && r.Subject != nil && r.Subject.HasAudience(google.WorkloadIdentityPool()) {
			subjects[r.Subject.Subject]++
		}
	}
	for sa := range emails {
		if subjects[satoken.ServiceAccount(ns, sa)] != 1 {
			t.Errorf("STS exchanges of %s's token: %d, want 1 (then cached): %v", sa, subjects[satoken.ServiceAccount(ns, sa)], subjects)
		}
	}
}

// routed sends Key Vault's host to its fake and everything else (Entra)
// to the Entra fake.
type routed struct {
	vaultHost string
	vault     http.RoundTripper
	entra     http.RoundTripper
}

func (r routed) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == r.vaultHost {
		return r.vault.RoundTrip(req)
	}
	return r.entra.RoundTrip(req)
}

// TestDecryptionWithAzureServiceAccounts renders two Kustomizations whose
// spec.decryption names two ServiceAccounts mapped to two Entra
// applications against an Azure Key Vault file: each ServiceAccount's
// token (audience api://AzureADTokenExchange) is its application's client
// assertion for Key Vault's scope, and Key Vault sees each application's
// token.
func TestDecryptionWithAzureServiceAccounts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	entra := azurefake.Start(t)
	vault := azurekv.New(t, map[string]string{"author": "author-secret"})
	u, err := url.Parse(vault.URL)
	if err != nil {
		t.Fatal(err)
	}
	entra.Install(t, &http.Client{Transport: routed{vaultHost: u.Host, vault: vault.Client.Transport, entra: entra.Client().Transport}})

	const tenant, scope = "72f988bf-86f1-41af-91ab-2d7cd011db47", "https://vault.azure.net/.default"
	clients := map[string]string{"tenant-a": "11111111-1111-1111-1111-111111111111", "tenant-b": "22222222-2222-2222-2222-222222222222"}
	for sa, client := range clients {
		vault.Accept(azurefake.AccessToken(client, scope), client)
		env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa,
			Annotations: map[string]string{authazure.TenantIDAnnotation: tenant, authazure.ClientIDAnnotation: client}}})
	}
	author := map[string][]byte{decrypt.AzureKVKey: []byte(`{"tenantId": "` + azurekv.Tenant + `", "clientId": "author", "clientSecret": "author-secret", "authorityHost": "` + vault.URL + `/"}`)}
	root := sourceWith(t, encryptWith(t, author, decrypt.Options{AzureTransport: vault.Client}, azkv.NewMasterKey(vault.URL, "sops", "1")))
	opts := render.Options{Identity: &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}}

	decryptAs(t, env.Client, ns, root, opts, "tenant-a", "tenant-b")
	decrypted := map[string]bool{}
	for _, r := range vault.Requests() {
		if r.Operation == "decrypt" && r.Status == http.StatusOK {
			decrypted[r.Client] = true
		}
	}
	if len(decrypted) != 2 || !decrypted[clients["tenant-a"]] || !decrypted[clients["tenant-b"]] {
		t.Errorf("Key Vault decrypted for %v, want the two applications", decrypted)
	}
	for _, r := range entra.Requests() {
		if r.Assertion == nil {
			continue
		}
		sa := map[string]string{clients["tenant-a"]: "tenant-a", clients["tenant-b"]: "tenant-b"}[r.Form.Get("client_id")]
		if r.Assertion.Subject != satoken.ServiceAccount(ns, sa) || !strings.Contains(r.Form.Get("scope"), scope) {
			t.Errorf("Entra got %s's assertion for client %s, scope %q", r.Assertion.Subject, r.Form.Get("client_id"), r.Form.Get("scope"))
		}
	}
}

// decryptAs renders, one after the other, a Kustomization per name whose
// spec.decryption names that ServiceAccount, and checks each decrypted
// the one Secret of root.
func decryptAs(t *testing.T, c client.Client, ns, root string, opts render.Options, serviceAccounts ...string) {
	t.Helper()
	for _, sa := range serviceAccounts {
		res, err := render.Kustomization(context.Background(), c, sopsKustomization(ns, sa, kustomizev1.Decryption{ServiceAccountName: sa}), root, opts)
		if err != nil {
			t.Fatalf("%s: %v", sa, err)
		}
		if got := password(t, res.Objects); got != "tenant-value" {
			t.Errorf("%s: password = %q", sa, got)
		}
	}
}
