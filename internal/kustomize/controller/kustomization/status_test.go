package kustomization

import (
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestApplyStatus(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const rev, old = "main@sha1:2222222222222222222222222222222222222222", "main@sha1:1111111111111111111111111111111111111111"
	applied := &outcome{source: sourceResult{revision: rev}, build: buildResult{attempted: true, checksum: "sha256:abc"},
		apply: applyResult{inventory: &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "ns_a__ConfigMap", Version: "v1"}}}}}
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
		// healthRan: the run got to the health check, which marked
		// Healthy Unknown while it ran.
		healthRan bool
		healthy   metav1.ConditionStatus // "" when Healthy must be absent
	}{
		{
			name: "success", out: applied,
			ready: metav1.ConditionTrue, reason: meta.ReconciliationSucceededReason, message: "Applied revision: " + rev,
			observed: 2, lastApplied: rev, lastAttempt: rev, historyState: meta.ReconciliationSucceededReason,
		},
		{
			name: "success after a health check", out: &outcome{source: sourceResult{revision: rev}, build: buildResult{attempted: true, checksum: "sha256:abc"},
				health: healthResult{passed: true, took: time.Second}, apply: applied.apply},
			ready: metav1.ConditionTrue, reason: meta.ReconciliationSucceededReason, message: "Applied revision: " + rev,
			observed: 2, lastApplied: rev, lastAttempt: rev, historyState: meta.ReconciliationSucceededReason,
			healthRan: true, healthy: metav1.ConditionTrue,
		},
		{
			name:  "health check failure retries and says Healthy False",
			out:   &outcome{source: sourceResult{revision: rev}, build: buildResult{attempted: true, checksum: "sha256:abc"}, apply: applied.apply},
			err:   &errs.Generic{Err: errors.New("timeout waiting for: [Deployment/ns/a status: 'InProgress']"), Reason: meta.HealthCheckFailedReason},
			ready: metav1.ConditionFalse, reason: meta.HealthCheckFailedReason, message: "timeout waiting for: [Deployment/ns/a status: 'InProgress']",
			reconciling: true, observed: 1, lastApplied: old, lastAttempt: rev, historyState: meta.HealthCheckFailedReason,
			healthRan: true, healthy: metav1.ConditionFalse,
		},
		{
			name:  "build failure keeps last applied, retries, records history",
			out:   &outcome{source: sourceResult{revision: rev}, build: buildResult{attempted: true, checksum: ""}},
			err:   &errs.Generic{Err: errors.New("kustomize build failed"), Reason: meta.BuildFailedReason},
			ready: metav1.ConditionFalse, reason: meta.BuildFailedReason, message: "kustomize build failed",
			reconciling: true, observed: 1, lastApplied: old, lastAttempt: rev,
		},
		{
			name:  "apply failure records the checksum in history",
			out:   &outcome{source: sourceResult{revision: rev}, build: buildResult{attempted: true, checksum: "sha256:abc"}},
			err:   &errs.Generic{Err: errors.New("dry-run failed"), Reason: meta.ReconciliationFailedReason},
			ready: metav1.ConditionFalse, reason: meta.ReconciliationFailedReason, message: "dry-run failed",
			reconciling: true, observed: 1, lastApplied: old, lastAttempt: rev, historyState: meta.ReconciliationFailedReason,
		},
		{
			name:  "waiting for a dependency is not a retry and attempts nothing",
			out:   &outcome{source: sourceResult{revision: rev}},
			err:   &errs.Waiting{Err: errors.New("dependency 'ns/a' is not ready"), Reason: meta.DependencyNotReadyReason},
			ready: metav1.ConditionFalse, reason: meta.DependencyNotReadyReason, message: "dependency 'ns/a' is not ready",
			observed: 1, lastApplied: old, lastAttempt: old,
		},
		{
			name: "a cycle stalls",
			out:  &outcome{source: sourceResult{revision: rev}},
			err: &errs.Waiting{Err: fmt.Errorf("%w: ns/a -> ns/b -> ns/a", dependency.ErrCycle),
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
		for _, inProgress := range []bool{false, true} {
			name := tt.name
			if inProgress {
				name += ", from the progress a run reports"
			}
			t.Run(name, func(t *testing.T) {
				obj := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
				obj.Status.ObservedGeneration = 1
				obj.Status.LastAppliedRevision, obj.Status.LastAttemptedRevision = old, old
				if inProgress {
					conditions.MarkReconciling(obj, meta.ProgressingReason, "Detecting drift for revision %s with a timeout of 5m0s", rev)
					if tt.healthRan {
						conditions.MarkUnknown(obj, meta.HealthyCondition, meta.ProgressingReason, "Running health checks")
					}
				}
				applyStatus(obj, tt.out, tt.err, now, time.Second)
				checkStatus(t, obj, tt.ready, tt.reason, tt.message, tt.reconciling, tt.stalled)
				for _, c := range obj.Status.Conditions {
					if c.Reason == meta.ProgressingReason {
						t.Errorf("%s still %s/%s %q after the run ended", c.Type, c.Status, c.Reason, c.Message)
					}
				}
				h := conditions.Get(obj, meta.HealthyCondition)
				if (tt.healthy == "") != (h == nil) || (h != nil && h.Status != tt.healthy) {
					t.Errorf("Healthy = %+v, want %q", h, tt.healthy)
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
}

// checkStatus checks Ready, Reconciling and Stalled.
func checkStatus(t *testing.T, obj *kustomizev1.Kustomization, status metav1.ConditionStatus, reason, message string, reconciling, stalled bool) {
	t.Helper()
	ready := conditions.Get(obj, meta.ReadyCondition)
	if ready.Status != status || ready.Reason != reason || ready.Message != message {
		t.Errorf("Ready = %s %s %q, want %s %s %q", ready.Status, ready.Reason, ready.Message, status, reason, message)
	}
	if got := conditions.IsTrue(obj, meta.ReconcilingCondition); got != reconciling {
		t.Errorf("Reconciling = %v, want %v", got, reconciling)
	}
	if got := conditions.IsTrue(obj, meta.StalledCondition); got != stalled {
		t.Errorf("Stalled = %v, want %v", got, stalled)
	}
}
