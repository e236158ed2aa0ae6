package kustomization

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

const quietRev = "main@sha1:3333333333333333333333333333333333333333"

// converged is a Kustomization its last run left Ready at quietRev, with
// a passed health check when healthy.
func converged(healthy bool) *kustomizev1.Kustomization {
	obj := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	obj.Status.ObservedGeneration = 3
	obj.Status.LastAppliedRevision, obj.Status.LastAttemptedRevision = quietRev, quietRev
	obj.Status.Inventory = &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "ns_a__ConfigMap", Version: "v1"}}}
	conditions.MarkReady(obj, meta.ReconciliationSucceededReason, "Applied revision: %s", quietRev)
	if healthy {
		conditions.MarkTrue(obj, meta.HealthyCondition, meta.SucceededReason, "Health check passed in 2s")
	}
	obj.Status.History.Upsert("sha256:abc", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), time.Second,
		meta.ReconciliationSucceededReason, map[string]string{"revision": quietRev})
	return obj
}

func TestSteady(t *testing.T) {
	tests := []struct {
		name   string
		change func(*kustomizev1.Kustomization)
		rev    string
		want   bool
	}{
		{"converged", nil, quietRev, true},
		{"a new revision", nil, "main@sha1:4444444444444444444444444444444444444444", false},
		{"a new generation", func(k *kustomizev1.Kustomization) { k.Generation = 4 }, quietRev, false},
		{"a reconcile request", func(k *kustomizev1.Kustomization) {
			k.Annotations = map[string]string{meta.ReconcileRequestAnnotation: "now"}
		}, quietRev, false},
		{"a request handled before", func(k *kustomizev1.Kustomization) {
			k.Annotations = map[string]string{meta.ReconcileRequestAnnotation: "then"}
			k.Status.LastHandledReconcileAt = "then"
		}, quietRev, true},
		{"a failure", func(k *kustomizev1.Kustomization) {
			conditions.MarkFailed(k, meta.ReconciliationFailedReason, "dry-run failed")
		}, quietRev, false},
		{"an interrupted run", func(k *kustomizev1.Kustomization) {
			conditions.MarkReconciling(k, meta.ProgressingReason, "Detecting drift")
		}, quietRev, false},
		{"last attempt at another revision", func(k *kustomizev1.Kustomization) {
			k.Status.LastAttemptedRevision = "main@sha1:4444444444444444444444444444444444444444"
		}, quietRev, false},
	}
	for _, tt := range tests {
		obj := converged(false)
		if tt.change != nil {
			tt.change(obj)
		}
		if got := steady(obj, sourceResult{revision: tt.rev}); got != tt.want {
			t.Errorf("%s: steady = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestQuietEnd: a quiet run that changed nothing leaves the status exactly
// as it found it, whatever its held progress did to the conditions; one
// that changed something gets its status, with the conditions it started
// from (Ready keeps its transition time); a run that wrote, failed or was
// not quiet is left to applyStatus.
func TestQuietEnd(t *testing.T) {
	unchanged := &ssa.ChangeSet{Entries: []ssa.ChangeSetEntry{{Action: ssa.Unchanged}}}
	configured := &ssa.ChangeSet{Entries: []ssa.ChangeSetEntry{{Action: ssa.Configured,
		ObjMetadata: ssa.ObjMetadata{Namespace: "ns", Name: "a"}}}}
	tests := []struct {
		name    string
		healthy bool
		out     func(inv *kustomizev1.ResourceInventory) *outcome
		err     error
		noop    bool
		settled bool // conditions put back as they were
	}{
		{name: "nothing changed", out: func(inv *kustomizev1.ResourceInventory) *outcome {
			return &outcome{progress: progress{quiet: true}, apply: applyResult{applied: unchanged, inventory: inv}}
		}, noop: true, settled: true},
		{name: "nothing changed, health passed at once", healthy: true, out: func(inv *kustomizev1.ResourceInventory) *outcome {
			return &outcome{progress: progress{quiet: true}, apply: applyResult{applied: unchanged, inventory: inv},
				health: healthResult{passed: true, took: time.Millisecond}}
		}, noop: true, settled: true},
		{name: "drift corrected", out: func(inv *kustomizev1.ResourceInventory) *outcome {
			return &outcome{progress: progress{quiet: true}, apply: applyResult{applied: configured, inventory: inv}}
		}, settled: true},
		{name: "health check newly configured", out: func(inv *kustomizev1.ResourceInventory) *outcome {
			return &outcome{progress: progress{quiet: true}, apply: applyResult{applied: unchanged, inventory: inv}, health: healthResult{passed: true}}
		}, settled: true},
		{name: "another inventory", out: func(*kustomizev1.ResourceInventory) *outcome {
			return &outcome{progress: progress{quiet: true}, apply: applyResult{applied: unchanged, inventory: &kustomizev1.ResourceInventory{}}}
		}, settled: true},
		{name: "progress was written", out: func(inv *kustomizev1.ResourceInventory) *outcome {
			return &outcome{progress: progress{quiet: true, wrote: true}, apply: applyResult{applied: unchanged, inventory: inv}}
		}},
		{name: "failed", out: func(inv *kustomizev1.ResourceInventory) *outcome {
			return &outcome{progress: progress{quiet: true}, apply: applyResult{applied: unchanged, inventory: inv}}
		}, err: errors.New("prune failed")},
		{name: "not quiet", out: func(inv *kustomizev1.ResourceInventory) *outcome {
			return &outcome{apply: applyResult{applied: unchanged, inventory: inv}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := converged(tt.healthy)
			before := obj.Status.DeepCopy()
			out := tt.out(before.Inventory.DeepCopy())
			conditions.MarkReconciling(obj, meta.ProgressingReason, "Detecting drift for revision %s", quietRev)
			if out.health.passed {
				conditions.MarkUnknown(obj, meta.HealthyCondition, meta.ProgressingReason, "Running health checks")
			}
			obj.Status.LastAttemptedRevision = quietRev
			if got := quietEnd(obj, before, out, tt.err); got != tt.noop {
				t.Errorf("quietEnd = %v, want %v", got, tt.noop)
			}
			if tt.noop {
				if diff := cmp.Diff(*before, obj.Status); diff != "" {
					t.Errorf("status changed by a run that changed nothing (-before +after):\n%s", diff)
				}
			}
			if settled := cmp.Equal(before.Conditions, obj.Status.Conditions); settled != tt.settled {
				t.Errorf("conditions as they were = %v, want %v: %+v", settled, tt.settled, obj.Status.Conditions)
			}
		})
	}
}
