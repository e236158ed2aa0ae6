package kustomization

import (
	"strings"
	"testing"

	"filippo.io/age"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// TestSOPSDecryption commits an age-encrypted Secret. Without
// spec.decryption the Kustomization fails with Flux's message and applies
// nothing, not even the plain objects of the same build; with it the Secret
// arrives decrypted. The plaintext never appears in a condition.
func TestSOPSDecryption(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	const password = "s3cr3t-value-never-logged"
	encrypted, err := decrypt.EncryptYAML([]byte(
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+password+"\n"),
		[]string{id.Recipient().String()})
	if err != nil {
		t.Fatal(err)
	}
	f, sha := newFixture(t, map[string]string{
		"secrets/db.yaml": string(encrypted),
		"secrets/cm.yaml": configMapYAML("plain", "k", "v"),
	})
	rev := "main@sha1:" + sha

	without := f.kustomization("without", "./secrets", func(s *kustomizev1.KustomizationSpec) { s.NamePrefix = "without-" })
	f.env.Create(t, without)
	ready := f.waitFailed(without, rev, meta.ReconciliationFailedReason)
	want := "Secret/" + f.ns + "/without-db is SOPS encrypted, configuring decryption is required for this secret to be reconciled"
	if !strings.Contains(ready.Message, want) {
		t.Errorf("message = %q, want it to contain %q", ready.Message, want)
	}
	if !f.absent("without-plain") {
		t.Error("a build holding ciphertext applied its other objects")
	}

	f.env.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sops-age", Namespace: f.ns},
		Data:       map[string][]byte{"identity.agekey": []byte(id.String() + "\n")},
	})
	with := f.kustomization("with", "./secrets", func(s *kustomizev1.KustomizationSpec) {
		s.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS, SecretRef: &meta.LocalObjectReference{Name: "sops-age"}}
	})
	f.env.Create(t, with)
	f.waitApplied(with, rev)
	var secret corev1.Secret
	if err := f.env.Client.Get(t.Context(), clientKey(f.ns, "db"), &secret); err != nil {
		t.Fatal(err)
	}
	if got := string(secret.Data["password"]); got != password {
		t.Errorf("password = %q, want the decrypted value", got)
	}

	// A wrong key fails the build without quoting the Secret.
	other, _ := age.GenerateX25519Identity()
	f.env.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "wrong-key", Namespace: f.ns},
		Data:       map[string][]byte{"identity.agekey": []byte(other.String())},
	})
	wrong := f.kustomization("wrong", "./secrets", func(s *kustomizev1.KustomizationSpec) {
		s.NamePrefix = "wrong-"
		s.Decryption = &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS, SecretRef: &meta.LocalObjectReference{Name: "wrong-key"}}
	})
	f.env.Create(t, wrong)
	ready = f.waitFailed(wrong, rev, meta.BuildFailedReason)
	if strings.Contains(ready.Message, password) {
		t.Errorf("the plaintext leaked into the condition: %q", ready.Message)
	}
}
