package helmrelease

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestFinishStatus(t *testing.T) {
	released := func(hr *helmv2.HelmRelease) {
		conditions.MarkTrue(hr, helmv2.ReleasedCondition, helmv2.UpgradeSucceededReason, "Helm upgrade succeeded")
	}
	tests := []struct {
		name       string
		tests      bool
		prepare    func(*helmv2.HelmRelease)
		err        error
		ready      metav1.ConditionStatus
		reason     string
		message    string
		stalled    bool
		reconciles bool
		observed   bool
	}{
		{name: "released", prepare: released, ready: "True", reason: helmv2.UpgradeSucceededReason, message: "Helm upgrade succeeded", observed: true},
		{name: "tested wins when tests are on", tests: true, prepare: func(hr *helmv2.HelmRelease) {
			released(hr)
			conditions.MarkTrue(hr, helmv2.TestSuccessCondition, helmv2.TestSucceededReason, "Helm test succeeded")
		}, ready: "True", reason: helmv2.TestSucceededReason, message: "Helm test succeeded", observed: true},
		{name: "ignored failed tests fall back to Released", tests: true, prepare: func(hr *helmv2.HelmRelease) {
			released(hr)
			conditions.MarkFalse(hr, helmv2.TestSuccessCondition, helmv2.TestFailedReason, "Helm test failed")
		}, ready: "True", reason: helmv2.UpgradeSucceededReason, message: "Helm upgrade succeeded", observed: true},
		{name: "in sync without a Released condition", ready: "True", reason: helmv2.ReconciliationSucceededReason, message: "Release reconciliation succeeded", observed: true},
		{name: "stalled", err: &errs.Stalling{Err: errors.New("Failed to upgrade after 2 attempt(s)"), Reason: "RetriesExceeded"},
			ready: "False", reason: "RetriesExceeded", message: "Failed to upgrade after 2 attempt(s)", stalled: true, observed: true},
		{name: "waiting", err: &errs.Waiting{Err: errors.New("no artifact"), Reason: helmv2.ArtifactFailedReason},
			ready: "False", reason: helmv2.ArtifactFailedReason, message: "no artifact"},
		{name: "retried", err: &errs.Generic{Err: errors.New("Helm upgrade failed"), Reason: helmv2.UpgradeFailedReason},
			ready: "False", reason: helmv2.UpgradeFailedReason, message: "Helm upgrade failed", reconciles: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			hr.Spec.Test = &helmv2.Test{Enable: tt.tests}
			if tt.prepare != nil {
				tt.prepare(hr)
			}
			finishStatus(hr, tt.err)
			ready := conditions.Get(hr, meta.ReadyCondition)
			if ready == nil || ready.Status != tt.ready || ready.Reason != tt.reason || ready.Message != tt.message {
				t.Fatalf("Ready = %+v", ready)
			}
			if got := conditions.IsTrue(hr, meta.StalledCondition); got != tt.stalled {
				t.Errorf("Stalled = %v", got)
			}
			if got := conditions.IsTrue(hr, meta.ReconcilingCondition); got != tt.reconciles {
				t.Errorf("Reconciling = %v", got)
			}
			if got := hr.Status.ObservedGeneration == 3; got != tt.observed {
				t.Errorf("observedGeneration moved = %v", got)
			}
		})
	}
}
