package app

import (
	"context"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// TestSOPSAgeSecretFlag runs the controllers with --sops-age-secret as
// parsed from the command line: a Kustomization whose spec.decryption
// names no Secret applies a SOPS age-encrypted Secret decrypted with the
// key of the flag's Secret in the controller's namespace
// (RUNTIME_NAMESPACE).
func TestSOPSAgeSecretFlag(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	t.Setenv("RUNTIME_NAMESPACE", ns)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	const password = "decrypted-with-the-flag-key"
	encrypted, err := decrypt.EncryptYAML([]byte(
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+password+"\n"),
		[]string{id.Recipient().String()})
	if err != nil {
		t.Fatal(err)
	}
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "sops.git")
	srv.Commit(t, "sops.git", gitserver.Commit{Files: map[string]string{"secrets/db.yaml": string(encrypted)}, Message: "sops"})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "sops", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{URL: srv.HTTPURL("sops.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "sops", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: repo.Name},
			Path:      "./secrets", TargetNamespace: ns, Interval: metav1.Duration{Duration: time.Hour},
			Decryption: &kustomizev1.Decryption{Provider: kustomizev1.DecryptionProviderSOPS},
		},
	}
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "global-age", Namespace: ns},
		Data: map[string][]byte{"identity.agekey": []byte(id.String() + "\n")}}, repo, ks)

	opts := DefaultOptions()
	fs := pflag.NewFlagSet("weir-controller", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse([]string{"--controllers=source,kustomize", "--sops-age-secret=global-age"}); err != nil {
		t.Fatal(err)
	}
	opts.MetricsAddr, opts.HealthAddr, opts.SkipNameValidation = "0", "0", true
	addr := freeAddr(t)
	opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = t.TempDir(), addr, addr
	runUntilStopped(t, env.Config, opts, nil)
	waitReconciled(t, env, ks, "")

	var db corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &db); err != nil {
		t.Fatal(err)
	}
	if got := string(db.Data["password"]); got != password {
		t.Errorf("Secret db has password %q, want the decrypted %q", got, password)
	}
}
