package kustomization

import (
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestApplyStatus(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const rev, old = "main@sha1:2222222222222222222222222222222222222222", "main@sha1:1111111111111111111111111111111111111111"
	applied := &outcome{revision: rev, attempted: true, checksum: "sha256:abc",
		inventory: &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "ns_a__ConfigMap", Version: "v1"}}}}
	tests := []struct {
		name         string
		out          *outcome
		err          error
		ready        metav1.ConditionStatus
		reason       string
		message      string
		reconciling  bool
		stalled      bool
		observed     int64
		lastApplied  string
		lastAttempt  string
		historyState string
	}{
		{
			name: "success", out: applied,
			ready: metav1.ConditionTrue, reason: meta.ReconciliationSucceededReason, message: "Applied revision: " + rev,
			observed: 2, lastApplied: rev, lastAttempt: rev, historyState: meta.ReconciliationSucceededReason,
		},
		{
			name:  "build failure keeps last applied, retries, records history",
			out:   &outcome{revision: rev, attempted: true, checksum: ""},
			err:   &errs.Generic{Err: errors.New("kustomize build failed"), Reason: meta.BuildFailedReason},
			ready: metav1.ConditionFalse, reason: meta.BuildFailedReason, message: "kustomize build failed",
			reconciling: true, observed: 1, lastApplied: old, lastAttempt: rev,
		},
		{
			name:  "apply failure records the checksum in history",
			out:   &outcome{revision: rev, attempted: true, checksum: "sha256:abc"},
			err:   &errs.Generic{Err: errors.New("dry-run failed"), Reason: meta.ReconciliationFailedReason},
			ready: metav1.ConditionFalse, reason: meta.ReconciliationFailedReason, message: "dry-run failed",
			reconciling: true, observed: 1, lastApplied: old, lastAttempt: rev, historyState: meta.ReconciliationFailedReason,
		},
		{
			name:  "waiting for a dependency is not a retry and attempts nothing",
			out:   &outcome{revision: rev},
			err:   &errs.Waiting{Err: errors.New("dependency 'ns/a' is not ready"), Reason: meta.DependencyNotReadyReason},
			ready: metav1.ConditionFalse, reason: meta.DependencyNotReadyReason, message: "dependency 'ns/a' is not ready",
			observed: 1, lastApplied: old, lastAttempt: old,
		},
		{
			name: "a cycle stalls",
			out:  &outcome{revision: rev},
			err: &errs.Waiting{Err: fmt.Errorf("%w: ns/a -> ns/b -> ns/a", errDependencyCycle),
				Reason: meta.DependencyNotReadyReason},
			ready: metav1.ConditionFalse, reason: meta.DependencyNotReadyReason, message: "dependency cycle: ns/a -> ns/b -> ns/a",
			stalled: true, observed: 1, lastApplied: old, lastAttempt: old,
		},
		{
			name:  "a spec that cannot work stalls and is observed",
			out:   &outcome{},
			err:   &errs.Stalling{Err: errors.New("can't access 'GitRepository/other/x'"), Reason: accessDeniedReason},
			ready: metav1.ConditionFalse, reason: accessDeniedReason, message: "can't access 'GitRepository/other/x'",
			stalled: true, observed: 2, lastApplied: old, lastAttempt: old,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
			obj.Status.ObservedGeneration = 1
			obj.Status.LastAppliedRevision, obj.Status.LastAttemptedRevision = old, old
			applyStatus(obj, tt.out, tt.err, now, time.Second)

			ready := conditions.Get(obj, meta.ReadyCondition)
			if ready.Status != tt.ready || ready.Reason != tt.reason || ready.Message != tt.message {
				t.Errorf("Ready = %s %s %q, want %s %s %q", ready.Status, ready.Reason, ready.Message, tt.ready, tt.reason, tt.message)
			}
			if got := conditions.IsTrue(obj, meta.ReconcilingCondition); got != tt.reconciling {
				t.Errorf("Reconciling = %v, want %v", got, tt.reconciling)
			}
			if got := conditions.IsTrue(obj, meta.StalledCondition); got != tt.stalled {
				t.Errorf("Stalled = %v, want %v", got, tt.stalled)
			}
			st := obj.Status
			if st.ObservedGeneration != tt.observed || st.LastAppliedRevision != tt.lastApplied || st.LastAttemptedRevision != tt.lastAttempt {
				t.Errorf("observed %d applied %q attempted %q, want %d %q %q",
					st.ObservedGeneration, st.LastAppliedRevision, st.LastAttemptedRevision, tt.observed, tt.lastApplied, tt.lastAttempt)
			}
			switch {
			case tt.historyState == "" && len(st.History) != 0:
				t.Errorf("history = %+v, want none", st.History)
			case tt.historyState != "" && (len(st.History) != 1 || st.History[0].LastReconciledStatus != tt.historyState ||
				st.History[0].Metadata["revision"] != rev):
				t.Errorf("history = %+v, want one %s snapshot of %s", st.History, tt.historyState, rev)
			}
		})
	}
}
