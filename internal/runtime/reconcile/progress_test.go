package reconcile

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestRunStoresTheFinalizerFirstAndPatchesProgress runs the skeleton on a
// fake API server: when the kind's phases start, the stored object already
// carries the finalizer, and a ProgressUnknown call is stored at once.
func TestRunStoresTheFinalizerFirstAndPatchesProgress(t *testing.T) {
	s := runtime.NewScheme()
	if err := kustomizev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	obj := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "ns", Generation: 1}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(obj).WithStatusSubresource(obj).Build()
	key := types.NamespacedName{Namespace: "ns", Name: "apps"}
	stored := func(ctx context.Context) *kustomizev1.Kustomization {
		var k kustomizev1.Kustomization
		if err := c.Get(ctx, key, &k); err != nil {
			t.Fatal(err)
		}
		return &k
	}
	ran := false
	_, err := Run(context.Background(), Driver{Client: c}, ctrl.Request{NamespacedName: key}, &kustomizev1.Kustomization{},
		Kind[*kustomizev1.Kustomization, *struct{}]{
			Name:      kustomizev1.KustomizationKind,
			Suspended: func(*kustomizev1.Kustomization) bool { return false },
			Finalize:  func(context.Context, *kustomizev1.Kustomization) error { return nil },
			Phases: []Phase[*kustomizev1.Kustomization, *struct{}]{func(ctx context.Context, k *kustomizev1.Kustomization, _ *struct{}) error {
				ran = true
				if !controllerutil.ContainsFinalizer(stored(ctx), meta.Finalizer) {
					t.Error("phases began before the finalizer was stored")
				}
				if err := ProgressUnknown(ctx, k, "Fetching manifests for revision %s", "main@sha1:1"); err != nil {
					return err
				}
				got := stored(ctx)
				rec, ready := conditions.Get(got, meta.ReconcilingCondition), conditions.Get(got, meta.ReadyCondition)
				if rec == nil || rec.Status != metav1.ConditionTrue || rec.Reason != meta.ProgressingReason ||
					ready == nil || ready.Status != metav1.ConditionUnknown || ready.Message != "Fetching manifests for revision main@sha1:1" {
					t.Errorf("stored conditions after ProgressUnknown = %+v", got.Status.Conditions)
				}
				conditions.MarkReady(k, meta.ReconciliationSucceededReason, "Applied revision: main@sha1:1")
				return nil
			}},
		})
	if err != nil || !ran {
		t.Fatalf("Run: %v (phases ran: %v)", err, ran)
	}
	got := stored(context.Background())
	if conditions.Get(got, meta.ReconcilingCondition) != nil || !conditions.IsTrue(got, meta.ReadyCondition) {
		t.Errorf("stored conditions after the run = %+v, want Ready and no Reconciling", got.Status.Conditions)
	}
}

// TestProgressOutsideRun only sets the conditions: no patcher, no write.
func TestProgressOutsideRun(t *testing.T) {
	k := &kustomizev1.Kustomization{}
	conditions.MarkReady(k, meta.ReconciliationSucceededReason, "Applied revision: a")
	conditions.MarkStalled(k, "X", "x")
	if err := Progress(context.Background(), k, "Detecting drift"); err != nil {
		t.Fatal(err)
	}
	if c := conditions.Get(k, meta.ReconcilingCondition); c == nil || c.Message != "Detecting drift" || c.Reason != meta.ProgressingReason {
		t.Errorf("Reconciling = %+v", c)
	}
	if conditions.Get(k, meta.StalledCondition) != nil {
		t.Error("Stalled kept while progressing")
	}
	if c := conditions.Get(k, meta.ReadyCondition); c.Status != metav1.ConditionFalse {
		t.Errorf("Progress changed Ready: %+v", c)
	}
}
