package render_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3/keys"
	"github.com/getsops/sops/v3/kms"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awskms"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/offline"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
	"github.com/weir-gitops/weir/internal/kustomize/render"
)

func TestMain(m *testing.M) {
	if _, err := offline.Apply(); err != nil {
		panic(err)
	}
	testenv.Main(m, testenv.APIServerOnly)
}

const keyARN = "arn:aws:kms:eu-central-1:123456789012:key/tenants"

// sourceWith writes a source tree holding one Secret manifest.
func sourceWith(t *testing.T, manifest []byte) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "secret.yaml"), manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

func sopsKustomization(ns, name string, d kustomizev1.Decryption) *kustomizev1.Kustomization {
	d.Provider = kustomizev1.DecryptionProviderSOPS
	return &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kustomizev1.KustomizationSpec{Path: "./", Decryption: &d}}
}

// password is the decrypted password of the one Secret a build made.
func password(t *testing.T, objects []*unstructured.Unstructured) string {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() == "Secret" {
			v, _, _ := unstructured.NestedString(o.Object, "stringData", "password")
			return v
		}
	}
	t.Fatal("the build made no Secret")
	return ""
}

// TestDecryptionWithServiceAccounts renders, as the controller does with
// the ObjectLevelWorkloadIdentity gate on, two Kustomizations whose
// spec.decryption names two ServiceAccounts of the real API server, each
// annotated with its IAM role. Each build asks the API server for a token
// of its ServiceAccount (audience sts.amazonaws.com), exchanges it with
// STS AssumeRoleWithWebIdentity for its role under Flux's session name,
// and decrypts the AWS KMS file with that session: two ServiceAccounts,
// two sessions. A second build reuses the cached session.
func TestDecryptionWithServiceAccounts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	fake := awskms.New(t)
	t.Setenv("AWS_ENDPOINT_URL_KMS", fake.URL)
	t.Setenv("AWS_ENDPOINT_URL_STS", fake.URL)
	fake.AddAccessKey("AKIAAUTHOR", "author-secret")
	author, err := decrypt.New(map[string][]byte{decrypt.AWSKMSKey: []byte("aws_access_key_id: AKIAAUTHOR\naws_secret_access_key: author-secret")})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := author.EncryptYAMLTo([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: tenant-value\n"),
		[]keys.MasterKey{kms.NewMasterKey(keyARN, "", nil)})
	if err != nil {
		t.Fatal(err)
	}
	root := sourceWith(t, doc)
	roles := map[string]string{"tenant-a": "arn:aws:iam::123456789012:role/tenant-a", "tenant-b": "arn:aws:iam::123456789012:role/tenant-b"}
	for name, role := range roles {
		env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{"eks.amazonaws.com/role-arn": role}}})
	}
	env.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unannotated"}})
	settings := &auth.Settings{ObjectLevel: true, Client: env.Client, Cache: auth.NewCache(10, time.Hour)}
	opts := render.Options{Identity: settings}

	for _, name := range []string{"tenant-a", "tenant-b", "tenant-a"} {
		res, err := render.Kustomization(ctx, env.Client, sopsKustomization(ns, name, kustomizev1.Decryption{ServiceAccountName: name}), root, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := password(t, res.Objects); got != "tenant-value" {
			t.Errorf("%s: password = %q", name, got)
		}
	}

	sessions := map[string]string{} // role → access key id of its session
	for _, r := range fake.Requests() {
		if r.Operation != "AssumeRoleWithWebIdentity" {
			continue
		}
		sa := strings.TrimPrefix(r.RoleARN, "arn:aws:iam::123456789012:role/")
		if want := sa + "." + ns + ".eu-central-1.fluxcd.io"; r.SessionName != want {
			t.Errorf("session name = %q, want %q", r.SessionName, want)
		}
		if _, again := sessions[r.RoleARN]; again {
			t.Errorf("%s exchanged twice: the cache was not used", sa)
		}
		sessions[r.RoleARN] = r.WebIdentityToken
		review := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: r.WebIdentityToken, Audiences: []string{"sts.amazonaws.com"}}}
		if err := env.Client.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		if want := "system:serviceaccount:" + ns + ":" + sa; !review.Status.Authenticated || review.Status.User.Username != want {
			t.Errorf("STS got a token of %q (authenticated %v), want %s", review.Status.User.Username, review.Status.Authenticated, want)
		}
	}
	if len(sessions) != 2 {
		t.Fatalf("role sessions = %d, want 2 (one per ServiceAccount): %+v", len(sessions), fake.Requests())
	}
	signers := map[string]bool{}
	for _, r := range fake.Requests() {
		if r.Operation == "Decrypt" {
			signers[r.AccessKeyID] = true
		}
	}
	if len(signers) != 2 || signers["AKIAAUTHOR"] {
		t.Errorf("KMS Decrypt signed by %v, want the two sessions' keys", signers)
	}

	_, err = render.Kustomization(ctx, env.Client, sopsKustomization(ns, "bare", kustomizev1.Decryption{ServiceAccountName: "unannotated"}), root, opts)
	if err == nil || !strings.Contains(err.Error(), "invalid eks.amazonaws.com/role-arn annotation: ''") {
		t.Errorf("unannotated ServiceAccount: err = %v", err)
	}
	// The gate off: the name is refused, not ignored.
	_, err = render.Kustomization(ctx, env.Client, sopsKustomization(ns, "gated", kustomizev1.Decryption{ServiceAccountName: "tenant-a"}), root,
		render.Options{Identity: &auth.Settings{Client: env.Client}})
	if err == nil || !strings.Contains(err.Error(), "please enable the ObjectLevelWorkloadIdentity feature gate") {
		t.Errorf("gate off: err = %v", err)
	}
}

// TestSOPSAgeSecret: a Kustomization whose decryption names no Secret
// decrypts with the age keys of --sops-age-secret, and only those: the
// global Secret's cloud credentials are not lent.
func TestSOPSAgeSecret(t *testing.T) {
	env := testenv.Get(t)
	ns, controllerNS := env.Namespace(t), env.Namespace(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := decrypt.EncryptYAML([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: global-age\n"),
		[]string{id.Recipient().String()})
	if err != nil {
		t.Fatal(err)
	}
	root := sourceWith(t, doc)
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNS, Name: "sops-age"},
		Data: map[string][]byte{"global.agekey": []byte(id.String()), decrypt.AWSKMSKey: []byte("not: credentials")}})
	k := sopsKustomization(ns, "app", kustomizev1.Decryption{})
	res, err := render.Kustomization(context.Background(), env.Client, k, root,
		render.Options{SOPSAgeSecret: &client.ObjectKey{Namespace: controllerNS, Name: "sops-age"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := password(t, res.Objects); got != "global-age" {
		t.Errorf("password = %q", got)
	}
	// A secretRef wins over the global Secret, as in Flux.
	k.Spec.Decryption.SecretRef = &meta.LocalObjectReference{Name: "missing"}
	_, err = render.Kustomization(context.Background(), env.Client, k, root,
		render.Options{SOPSAgeSecret: &client.ObjectKey{Namespace: controllerNS, Name: "sops-age"}})
	if err == nil || !strings.Contains(err.Error(), "cannot get sops decryption Secret '"+ns+"/missing'") {
		t.Errorf("err = %v", err)
	}
	_, err = render.Kustomization(context.Background(), env.Client, sopsKustomization(ns, "app", kustomizev1.Decryption{}), root,
		render.Options{SOPSAgeSecret: &client.ObjectKey{Namespace: controllerNS, Name: "absent"}})
	if err == nil || !strings.Contains(err.Error(), "cannot get sops SOPS age decryption Secret '"+controllerNS+"/absent'") {
		t.Errorf("absent global Secret: err = %v", err)
	}
}
