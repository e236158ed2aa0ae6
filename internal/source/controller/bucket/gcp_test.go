package bucket

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpkms"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gcsserver"
)

// TestProviderGCP reads a GCS bucket with the controller's identity (the
// GKE metadata server's token) and with a Secret's service account JSON
// key; the server saw exactly those two bearer tokens. A Secret without
// the key is Flux's AuthenticationFailed.
func TestProviderGCP(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := gcpfake.Start(t, gcpfake.Options{})
	fake.Setenv(t)
	const email = "reader@weir-project.iam.gserviceaccount.com"
	keys := gcpkms.New(t) // its token endpoint exchanges the JSON keys it makes
	isKey := func(token string) bool { who, ok := keys.Principal(token); return ok && who == email }
	srv := gcsserver.New(t, func(token string) bool { return isKey(token) || token == gcpfake.ControllerToken() })
	srv.CreateBucket("manifests")
	revision := revisionOf(map[string]string{"app/a.yaml": srv.PutObject(t, "manifests", "app/a.yaml", "a: 1\n")})
	srv.PutObject(t, "manifests", "other/b.yaml", "b: 1\n")
	f := &fixture{env: env, ns: ns}
	f.createSecret(t, "gcp-key", map[string][]byte{"serviceaccount": keys.AddServiceAccount(t, email)})
	f.createSecret(t, "gcp-empty", map[string][]byte{"json": []byte("{}")})
	bucket := func(name, secret string) *sourcev1.Bucket {
		obj := &sourcev1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: sourcev1.BucketSpec{Provider: sourcev1.BucketProviderGoogle, BucketName: "manifests",
				Endpoint: srv.Endpoint(), Insecure: true, Prefix: "app/", Interval: metav1.Duration{Duration: time.Hour}},
		}
		if secret != "" {
			obj.Spec.SecretRef = &meta.LocalObjectReference{Name: secret}
		}
		return obj
	}
	controller, key := bucket("controller", ""), bucket("key", "gcp-key")
	f.create(t, controller)
	f.create(t, key)
	waitReady(t, env, controller, revision)
	waitReady(t, env, key, revision)
	tokens := srv.Tokens()
	if len(tokens) != 2 || !slices.Contains(tokens, gcpfake.ControllerToken()) || !slices.ContainsFunc(tokens, isKey) {
		t.Errorf("bearer tokens %q, want the metadata server's and the JSON key's", tokens)
	}

	empty := bucket("empty", "gcp-empty")
	f.create(t, empty)
	ready := env.WaitForFailure(t, empty, sourcev1.AuthenticationFailedReason)
	if want := "invalid 'gcp-empty' secret data: required fields 'serviceaccount'"; ready.Message != want {
		t.Errorf("message %q, want %q", ready.Message, want)
	}
}

// TestProviderGCPObjectLevel reads the bucket as a ServiceAccount that
// impersonates a Google service account: Google STS exchanges its
// TokenRequest token, IAM Credentials impersonates, and GCS sees the
// impersonated token; a second reconcile exchanges nothing.
func TestProviderGCPObjectLevel(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := gcpfake.Start(t, gcpfake.Options{})
	fake.Setenv(t)
	sts, iam := gcp.Default.STSURL, gcp.Default.IAMCredentialsURL
	gcp.Default.STSURL, gcp.Default.IAMCredentialsURL = fake.URL+"/v1/token", fake.URL
	t.Cleanup(func() { gcp.Default.STSURL, gcp.Default.IAMCredentialsURL = sts, iam })
	const email = "tenant-a@weir-project.iam.gserviceaccount.com"
	srv := gcsserver.New(t, gcsserver.Accept(gcpfake.ImpersonatedToken(email)))
	srv.CreateBucket("manifests")
	revision := revisionOf(map[string]string{"a.yaml": srv.PutObject(t, "manifests", "a.yaml", "a: 1\n")})
	f := &fixture{env: env, ns: ns}
	f.create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", Namespace: ns,
		Annotations: map[string]string{gcp.ServiceAccountAnnotation: email}}})
	obj := &sourcev1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-a", Namespace: ns},
		Spec: sourcev1.BucketSpec{Provider: sourcev1.BucketProviderGoogle, BucketName: "manifests", Endpoint: srv.Endpoint(),
			Insecure: true, ServiceAccountName: "tenant-a", Interval: metav1.Duration{Duration: time.Hour}},
	}
	f.create(t, obj)
	waitReady(t, env, obj, revision)
	if tokens := srv.Tokens(); !slices.Equal(tokens, []string{gcpfake.ImpersonatedToken(email)}) {
		t.Errorf("bearer tokens %q, want the impersonated one only", tokens)
	}
	exchanges := fake.Count("/v1/")
	if exchanges == 0 {
		t.Fatal("no STS or IAM Credentials call")
	}
	env.RequestReconcile(t, obj)
	env.WaitHandled(t, obj)
	if n := fake.Count("/v1/"); n != exchanges {
		t.Errorf("a second reconcile made %d more exchanges, want none (cached)", n-exchanges)
	}
}
