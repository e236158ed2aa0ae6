package gitrepository

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestUnsignedCommitFailsVerification: with spec.verify, an unsigned HEAD
// is refused with SourceVerified=False and no artifact is stored.
func TestUnsignedCommitFailsVerification(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "unsigned"})

	keys := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "pgp", Namespace: ns},
		Data:       map[string][]byte{"author.asc": armoredPublicKey(t)},
	}
	if err := env.Client.Create(ctx, keys); err != nil {
		t.Fatal(err)
	}
	obj := newRepo(ns, "app", srv.HTTPURL("app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	obj.Spec.Verification = &sourcev1.GitRepositoryVerification{
		Mode: sourcev1.ModeGitHEAD, SecretRef: meta.LocalObjectReference{Name: "pgp"},
	}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		c := conditions.Get(obj, sourcev1.SourceVerifiedCondition)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == sourcev1.VerificationError, "not yet refused"
	})
	if obj.Status.Artifact != nil {
		t.Errorf("an unverified commit was stored: %+v", obj.Status.Artifact)
	}
	ready := conditions.Get(obj, meta.ReadyCondition)
	if ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, "signature") {
		t.Errorf("Ready = %s: %s", ready.Status, ready.Message)
	}
}

// TestSuspendedIsLeftAlone: a suspended GitRepository is not fetched.
func TestSuspendedIsLeftAlone(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
	obj := newRepo(ns, "app", srv.HTTPURL("app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	obj.Spec.Suspend = true
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	// The finalizer shows the reconciler has seen the object.
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return len(obj.Finalizers) == 1, "finalizer not added yet"
	})
	time.Sleep(time.Second)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	if obj.Status.Artifact != nil || len(obj.Status.Conditions) != 0 || srv.UploadPacks() != 0 {
		t.Errorf("suspended object was reconciled: %+v", obj.Status)
	}
}

func armoredPublicKey(t *testing.T) []byte {
	t.Helper()
	entity, err := openpgp.NewEntity("Weir Test", "", "test@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := entity.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return buf.Bytes()
}
