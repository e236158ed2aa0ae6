package bucket

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azureblob"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurefake"
	"github.com/weir-gitops/weir/internal/source/bucket"
)

// TestProviderAzure reads a Blob container with the controller's managed
// identity (an Entra token for Blob Storage from the fake's managed
// identity endpoint), with a Secret's account key (a Shared Key signature
// the fake checks) and with a Secret's SAS token: the revision is the
// same for all three, and the fake saw each way of authorizing. A Secret
// with none of Flux's keys is AuthenticationFailed with Flux's message.
func TestProviderAzure(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	entra := azurefake.Start(t)
	entra.SetenvManagedIdentity(t)
	saved := azure.Default.HTTPClient
	azure.Default.HTTPClient = entra.Client()
	t.Cleanup(func() { azure.Default.HTTPClient = saved })
	token := azurefake.AccessToken(azurefake.ManagedIdentityClient, bucket.AzureScope)
	srv := azureblob.New(t, azureblob.Options{Tokens: []string{token}, SASSignature: "c2lnbmF0dXJl", PageSize: 1})
	srv.CreateContainer("manifests")
	etags := map[string]string{}
	for k, v := range map[string]string{"app/a.yaml": "a: 1\n", "app/b.yaml": "b: 1\n"} {
		e := srv.PutBlob("manifests", k, v)
		etags[k] = bucket.AzureETag(&e)
	}
	srv.PutBlob("manifests", "other/c.yaml", "c\n")
	revision := revisionOf(etags)

	f := &fixture{env: env, ns: ns}
	f.createSecret(t, "az-key", map[string][]byte{"accountKey": []byte(srv.Key())})
	f.createSecret(t, "az-sas", map[string][]byte{"sasKey": []byte("?sv=2022-11-02&sp=rl&sig=c2lnbmF0dXJl")})
	f.createSecret(t, "az-none", map[string][]byte{"password": []byte("x")})
	newBucket := func(name, secret string) *sourcev1.Bucket {
		obj := &sourcev1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: sourcev1.BucketSpec{Provider: sourcev1.BucketProviderAzure, BucketName: "manifests",
				Endpoint: srv.Endpoint(), Insecure: true, Prefix: "app/", Interval: metav1.Duration{Duration: time.Hour}},
		}
		if secret != "" {
			obj.Spec.SecretRef = &meta.LocalObjectReference{Name: secret}
		}
		return obj
	}
	for _, obj := range []*sourcev1.Bucket{newBucket("identity", ""), newBucket("key", "az-key"), newBucket("sas", "az-sas")} {
		f.create(t, obj)
		waitReady(t, env, obj, revision)
	}
	for _, want := range []string{"bearer " + token, "sharedkey", "sas"} {
		if !slices.Contains(srv.Auths(), want) {
			t.Errorf("no request authorized as %q: %q", want, srv.Auths())
		}
	}
	if slices.Contains(srv.Auths(), "anonymous") {
		t.Error("an anonymous request reached the container")
	}

	none := newBucket("none", "az-none")
	f.create(t, none)
	ready := env.WaitForFailure(t, none, sourcev1.AuthenticationFailedReason)
	want := "invalid 'az-none' secret data: requires a 'clientId' or 'accountKey' field, a combination of 'tenantId', 'clientId' and 'clientSecret', or 'tenantId', 'clientId' and 'clientCertificate'"
	if ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
}

// TestProviderAzureWorkloadIdentity reads the container as a
// ServiceAccount mapped to an Entra application: its TokenRequest token
// is the client assertion, and the Blob service sees that application's
// token for Blob Storage.
func TestProviderAzureWorkloadIdentity(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	entra := azurefake.Start(t)
	entra.SetenvAuthority(t)
	saved := azure.Default.HTTPClient
	azure.Default.HTTPClient = entra.Client()
	t.Cleanup(func() { azure.Default.HTTPClient = saved })
	const client = "11111111-2222-3333-4444-555555555555"
	token := azurefake.AccessToken(client, bucket.AzureScope)
	srv := azureblob.New(t, azureblob.Options{Tokens: []string{token}})
	srv.CreateContainer("manifests")
	e := srv.PutBlob("manifests", "a.yaml", "a: 1\n")
	revision := revisionOf(map[string]string{"a.yaml": bucket.AzureETag(&e)})
	f := &fixture{env: env, ns: ns}
	f.create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: ns,
		Annotations: map[string]string{azure.TenantIDAnnotation: "weir-tenant", azure.ClientIDAnnotation: client}}})
	obj := &sourcev1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: ns},
		Spec: sourcev1.BucketSpec{Provider: sourcev1.BucketProviderAzure, BucketName: "manifests", Endpoint: srv.Endpoint(),
			Insecure: true, ServiceAccountName: "team-a", Interval: metav1.Duration{Duration: time.Hour}},
	}
	f.create(t, obj)
	waitReady(t, env, obj, revision)
	for _, a := range srv.Auths() {
		if a != "bearer "+token {
			t.Errorf("a request authorized as %q, want the application's token", a)
		}
	}
}

// TestProviderAzureClientSecretAndCertificate reads the container with a
// Secret's Entra application credentials, as Flux's azure provider reads
// them: tenantId, clientId and clientSecret; and tenantId, clientId and
// clientCertificate (certificate and key in one PEM), with
// clientCertificateSendChain. The fake authority checks the secret, and
// the assertion's PS256 signature with the registered certificate; the
// Blob service sees that application's token. A wrong secret fails with
// Entra's error and without the secret in the message.
func TestProviderAzureClientSecretAndCertificate(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	entra := azurefake.Start(t)
	saved := azure.Default.HTTPClient
	azure.Default.HTTPClient = entra.Client()
	t.Cleanup(func() { azure.Default.HTTPClient = saved })
	const secretApp, certApp = "a0000000-0000-0000-0000-00000000000a", "c0000000-0000-0000-0000-00000000000c"
	entra.AddClientSecret(secretApp, "s3cret-value")
	certPEM, cert := clientCertificate(t)
	entra.AddClientCertificate(certApp, cert)
	srv := azureblob.New(t, azureblob.Options{Tokens: []string{
		azurefake.AccessToken(secretApp, bucket.AzureScope), azurefake.AccessToken(certApp, bucket.AzureScope)}})
	srv.CreateContainer("manifests")
	e := srv.PutBlob("manifests", "a.yaml", "a: 1\n")
	revision := revisionOf(map[string]string{"a.yaml": bucket.AzureETag(&e)})

	f := &fixture{env: env, ns: ns}
	app := func(client string, creds map[string][]byte) map[string][]byte {
		creds["tenantId"], creds["clientId"], creds["authorityHost"] = []byte("weir-tenant"), []byte(client), []byte(entra.URL)
		return creds
	}
	f.createSecret(t, "az-secret", app(secretApp, map[string][]byte{"clientSecret": []byte("s3cret-value")}))
	f.createSecret(t, "az-cert", app(certApp, map[string][]byte{"clientCertificate": certPEM, "clientCertificateSendChain": []byte("true")}))
	f.createSecret(t, "az-wrong", app(secretApp, map[string][]byte{"clientSecret": []byte("not-the-s3cret")}))
	newBucket := func(name string) *sourcev1.Bucket {
		return &sourcev1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: sourcev1.BucketSpec{Provider: sourcev1.BucketProviderAzure, BucketName: "manifests", Endpoint: srv.Endpoint(),
				Insecure: true, SecretRef: &meta.LocalObjectReference{Name: "az-" + name}, Interval: metav1.Duration{Duration: time.Hour}},
		}
	}
	for _, name := range []string{"secret", "cert"} {
		obj := newBucket(name)
		f.create(t, obj)
		waitReady(t, env, obj, revision)
	}
	for _, client := range []string{secretApp, certApp} {
		if want := "bearer " + azurefake.AccessToken(client, bucket.AzureScope); !slices.Contains(srv.Auths(), want) {
			t.Errorf("no request authorized as %q: %q", want, srv.Auths())
		}
	}
	var auths []string
	for _, r := range entra.Requests() {
		if r.ClientAuth == "" {
			continue
		}
		auths = append(auths, r.ClientAuth)
		if r.ClientAuth == azurefake.AuthCertificate && !r.X5C {
			t.Error("clientCertificateSendChain: true, but the assertion carried no x5c")
		}
		if r.Form.Has("client_secret") || !slices.Contains(strings.Fields(r.Form.Get("scope")), bucket.AzureScope) {
			t.Errorf("token request form %v, want the Blob Storage scope and no secret recorded", r.Form)
		}
	}
	if !slices.Contains(auths, azurefake.AuthSecret) || !slices.Contains(auths, azurefake.AuthCertificate) || slices.Contains(auths, azurefake.AuthFederated) {
		t.Errorf("the authority saw %q, want a client secret and a certificate", auths)
	}

	wrong := newBucket("wrong")
	f.create(t, wrong)
	ready := env.WaitForFailure(t, wrong, sourcev1.BucketOperationFailedReason)
	if !strings.Contains(ready.Message, "AADSTS7000215") || strings.Contains(ready.Message, "s3cret") {
		t.Errorf("wrong secret: %s %q, want Entra's AADSTS7000215 and no secret", ready.Reason, ready.Message)
	}
	t.Logf("wrong secret: %s: %s", ready.Reason, ready.Message)
}

// clientCertificate is a self-signed RSA certificate and its key, in one
// PEM as Flux's clientCertificate key holds them.
func clientCertificate(t *testing.T) ([]byte, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "weir-bucket-reader"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	out = append(out, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})...)
	return out, cert
}
