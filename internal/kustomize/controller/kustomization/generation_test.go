package kustomization

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/patch"
)

// TestPatchKeepsTheReconciledGeneration: a spec edit that lands while a
// reconcile runs comes back in the reply of the reconcile's next status
// patch. The object must keep the generation the reconcile began with —
// the one its status and conditions report — while the API server keeps
// the edit. (The Kustomization is suspended: only this test writes it.)
func TestPatchKeepsTheReconciledGeneration(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "edited", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "none"},
			Path:      "./v1", Interval: metav1.Duration{Duration: time.Hour}, Suspend: true,
		},
	}
	if err := env.Client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	// The controller still adds its finalizer to a suspended object.
	var obj kustomizev1.Kustomization
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), &obj); err != nil {
			return false, err.Error()
		}
		return len(obj.Finalizers) > 0, "no finalizer yet"
	})
	began := obj.Generation
	h := patch.NewHelper(&obj, env.Client)

	edited := obj.DeepCopy()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), edited); err != nil {
			return err
		}
		edited.Spec.Path = "./v2"
		return env.Client.Update(ctx, edited)
	}); err != nil {
		t.Fatal(err)
	}
	if edited.Generation != began+1 {
		t.Fatalf("the edit made generation %d, want %d", edited.Generation, began+1)
	}
	obj.Status.LastAttemptedRevision = "main@sha1:1"
	if err := h.Patch(ctx, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Generation != began {
		t.Errorf("generation %d after the patch, want the reconcile's %d", obj.Generation, began)
	}
	obj.Status.LastAppliedRevision = "main@sha1:1"
	obj.Status.ObservedGeneration = obj.Generation
	if err := h.Patch(ctx, &obj); err != nil {
		t.Fatal(err)
	}
	var got kustomizev1.Kustomization
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), &got); err != nil {
		t.Fatal(err)
	}
	if got.Generation != began+1 || got.Spec.Path != "./v2" || got.Status.ObservedGeneration != began ||
		got.Status.LastAppliedRevision != "main@sha1:1" {
		t.Errorf("stored generation %d, path %q, observedGeneration %d, lastAppliedRevision %q; want %d, ./v2, %d, main@sha1:1",
			got.Generation, got.Spec.Path, got.Status.ObservedGeneration, got.Status.LastAppliedRevision, began+1, began)
	}
}
