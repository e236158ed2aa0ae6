package kustomization

import (
	"strings"
	"testing"

	"github.com/getsops/sops/v3/gcpkms"
	"github.com/getsops/sops/v3/hcvault"
	"github.com/getsops/sops/v3/keys"
	"github.com/getsops/sops/v3/kms"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awskms"
	gcpfake "github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpkms"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/vaulttransit"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

const kmsKeyARN = "arn:aws:kms:eu-central-1:123456789012:key/weir-sops"

// keyService is one key service a SOPS file of the test is encrypted
// with, and the decryption Secret a Kustomization reaches it with.
type keyService struct {
	name  string
	creds map[string][]byte
	key   keys.MasterKey
}

// encryptedSecret is a Secret manifest named name encrypted to key with
// creds, the way `sops -e` would.
func encryptedSecret(t *testing.T, name, value string, creds map[string][]byte, key keys.MasterKey) string {
	t.Helper()
	d, err := decrypt.New(creds)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.EncryptYAMLTo([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: "+name+"\nstringData:\n  password: "+value+"\n"),
		[]keys.MasterKey{key})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestSOPSKeyServices commits Secrets encrypted with AWS KMS (with an
// encryption context), Vault transit and GCP KMS, each by its fake, and
// has a Kustomization per service decrypt and apply one with the
// credentials of its decryption Secret: the Secret arrives decrypted and
// each fake saw the Secret's credentials. A wrong credential fails the
// build naming the key service and never the credential.
func TestSOPSKeyServices(t *testing.T) {
	aws, vault, gcp := awskms.New(t), vaulttransit.New(t, "hvs.kustomize-token"), gcpfake.New(t)
	t.Setenv("AWS_ENDPOINT_URL_KMS", aws.URL)
	t.Setenv("AWS_ENDPOINT_URL_STS", aws.URL)
	t.Setenv(gcpfake.ClientTypeEnv, "rest")
	t.Setenv(gcpfake.EndpointEnv, gcp.URL)
	aws.AddAccessKey("AKIAKUSTOMIZE", "aws-secret-of-the-test")
	team := "payments"
	vaultKey, err := hcvault.NewMasterKeyFromURI(vault.URL + "/v1/transit/keys/kustomize")
	if err != nil {
		t.Fatal(err)
	}
	services := []keyService{
		{"aws", map[string][]byte{decrypt.AWSKMSKey: []byte("aws_access_key_id: AKIAKUSTOMIZE\naws_secret_access_key: aws-secret-of-the-test\n")},
			kms.NewMasterKey(kmsKeyARN, "", map[string]*string{"team": &team})},
		{"vault", map[string][]byte{decrypt.VaultTokenKey: []byte("hvs.kustomize-token")}, vaultKey},
		{"gcp", map[string][]byte{decrypt.GCPKMSKey: gcp.AddServiceAccount(t, "flux@weir-test.iam.gserviceaccount.com")},
			gcpkms.NewMasterKeyFromResourceID("projects/weir-test/locations/global/keyRings/flux/cryptoKeys/sops")},
	}
	files := map[string]string{}
	for _, s := range services {
		files[s.name+"/secret.yaml"] = encryptedSecret(t, "db", "value-from-"+s.name, s.creds, s.key)
	}
	f, sha := newFixture(t, files)
	rev := "main@sha1:" + sha

	for _, s := range services {
		f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sops-" + s.name, Namespace: f.ns}, Data: s.creds})
		k := f.kustomization(s.name, "./"+s.name, func(spec *kustomizev1.KustomizationSpec) {
			spec.NamePrefix = s.name + "-"
			spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS,
				SecretRef: &meta.LocalObjectReference{Name: "sops-" + s.name}}
		})
		f.env.Create(t, k)
		f.waitApplied(k, rev)
		var secret corev1.Secret
		if err := f.env.Client.Get(t.Context(), clientKey(f.ns, s.name+"-db"), &secret); err != nil {
			t.Fatal(err)
		}
		if got := string(secret.Data["password"]); got != "value-from-"+s.name {
			t.Errorf("%s: password = %q, want the decrypted value", s.name, got)
		}
	}

	decrypts := func(ops []string) int {
		n := 0
		for _, op := range ops {
			if op == "decrypt" {
				n++
			}
		}
		return n
	}
	var awsOps []string
	for _, r := range aws.Requests() {
		if r.Operation == "Decrypt" {
			awsOps = append(awsOps, "decrypt")
			if r.AccessKeyID != "AKIAKUSTOMIZE" || r.Region != "eu-central-1" || r.Context["team"] != "payments" || r.Status != 200 {
				t.Errorf("AWS KMS Decrypt = %+v", r)
			}
		}
	}
	var vaultOps []string
	for _, r := range vault.Requests() {
		if r.Path == "/v1/transit/decrypt/kustomize" {
			vaultOps = append(vaultOps, "decrypt")
			if r.Token != "hvs.kustomize-token" || r.Status != 200 {
				t.Errorf("Vault decrypt = %+v", r)
			}
		}
	}
	var gcpOps []string
	for _, r := range gcp.Requests() {
		if r.Operation == "decrypt" {
			gcpOps = append(gcpOps, "decrypt")
			if r.Principal != "flux@weir-test.iam.gserviceaccount.com" || r.Status != 200 {
				t.Errorf("GCP KMS decrypt = %+v", r)
			}
		}
	}
	for name, ops := range map[string][]string{"AWS KMS": awsOps, "Vault": vaultOps, "GCP KMS": gcpOps} {
		if decrypts(ops) == 0 {
			t.Errorf("%s was never asked to decrypt", name)
		}
	}

	// Wrong credentials: BuildFailed naming the key service, no secret.
	wrong := []struct{ name, secretKey, value, want string }{
		{"aws", decrypt.AWSKMSKey, "aws_access_key_id: AKIAKUSTOMIZE\naws_secret_access_key: not-the-right-secret\n", "AWS KMS"},
		{"vault", decrypt.VaultTokenKey, "hvs.not-the-right-token", "HashiCorp Vault transit"},
	}
	for _, w := range wrong {
		f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "wrong-" + w.name, Namespace: f.ns},
			Data: map[string][]byte{w.secretKey: []byte(w.value)}})
		k := f.kustomization("wrong-"+w.name, "./"+w.name, func(spec *kustomizev1.KustomizationSpec) {
			spec.NamePrefix = "wrong-" + w.name + "-"
			spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS,
				SecretRef: &meta.LocalObjectReference{Name: "wrong-" + w.name}}
		})
		f.env.Create(t, k)
		ready := f.waitFailed(k, rev, meta.BuildFailedReason)
		if !strings.Contains(ready.Message, w.want) || !strings.Contains(ready.Message, "decryption failed for 'Secret/") {
			t.Errorf("%s: message %q does not name %s", w.name, ready.Message, w.want)
		}
		if strings.Contains(ready.Message, "not-the-right") || strings.Contains(ready.Message, "value-from-") {
			t.Errorf("%s: a secret leaked into the condition: %q", w.name, ready.Message)
		}
	}
}

// TestDecryptionServiceAccountNeedsTheGate: with the
// ObjectLevelWorkloadIdentity gate off (the tests' controller), a
// Kustomization naming spec.decryption.serviceAccountName stalls with
// Flux's reason and message and an event, instead of decrypting with the
// controller's identity.
func TestDecryptionServiceAccountNeedsTheGate(t *testing.T) {
	f, _ := newFixture(t, map[string]string{"app/cm.yaml": configMapYAML("plain", "k", "v")})
	k := f.kustomization("tenant", "./app", func(spec *kustomizev1.KustomizationSpec) {
		spec.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS, ServiceAccountName: "tenant"}
	})
	f.env.Create(t, k)
	const want = "to use spec.decryption.serviceAccountName for decryption authentication please enable the ObjectLevelWorkloadIdentity feature gate in the controller"
	ready := f.waitFailed(k, "", meta.FeatureGateDisabledReason)
	if ready.Message != want {
		t.Errorf("Ready message = %q, want Flux's %q", ready.Message, want)
	}
	if s := conditions.Get(k, meta.StalledCondition); s == nil || s.Status != metav1.ConditionTrue || s.Reason != meta.FeatureGateDisabledReason {
		t.Errorf("Stalled = %+v, want True with FeatureGateDisabled", s)
	}
	if !f.absent("plain") {
		t.Error("a Kustomization refused for its identity applied its objects")
	}
	f.env.AssertEvent(t, k, meta.FeatureGateDisabledReason, want)
}
