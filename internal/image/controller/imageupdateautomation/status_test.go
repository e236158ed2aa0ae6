package imageupdateautomation

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

func TestApplyStatus(t *testing.T) {
	run := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	policies := imagev1.ObservedPolicies{"app": {Name: "img", Tag: "2"}}
	tests := []struct {
		name      string
		out       *outcome
		err       error
		ready     metav1.ConditionStatus
		reason    string
		message   string
		stalled   bool
		pushed    bool
		observing bool
	}{
		{
			name: "pushed", out: &outcome{runTime: run, policies: policies, sourceRevision: "main@sha1:abc",
				push: &pushed{commit: "abc", at: run.Add(time.Second)}},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "repository up-to-date", pushed: true, observing: true,
		},
		{
			name: "nothing to push", out: &outcome{runTime: run, policies: policies, sourceRevision: "main@sha1:abc"},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "repository up-to-date", observing: true,
		},
		{
			name: "stalled", out: &outcome{runTime: run}, err: stalled(imagev1.InvalidSourceConfigReason, "bad ref"),
			ready: metav1.ConditionFalse, reason: imagev1.InvalidSourceConfigReason, message: "bad ref", stalled: true,
		},
		{
			name: "failed", out: &outcome{runTime: run}, err: failed(imagev1.GitOperationFailedReason, errors.New("failed to checkout source: x")),
			ready: metav1.ConditionFalse, reason: imagev1.GitOperationFailedReason, message: "failed to checkout source: x",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &imagev1.ImageUpdateAutomation{ObjectMeta: metav1.ObjectMeta{
				Generation: 3, Annotations: map[string]string{meta.ReconcileRequestAnnotation: "now"},
			}}
			applyStatus(obj, tt.out, tt.err)
			ready := conditions.Get(obj, meta.ReadyCondition)
			if ready == nil || ready.Status != tt.ready || ready.Reason != tt.reason || ready.Message != tt.message {
				t.Fatalf("Ready = %+v", ready)
			}
			if conditions.IsTrue(obj, meta.StalledCondition) != tt.stalled {
				t.Errorf("Stalled = %v", !tt.stalled)
			}
			if tt.ready == metav1.ConditionFalse && !tt.stalled && !conditions.IsTrue(obj, meta.ReconcilingCondition) {
				t.Error("a failure to retry is not Reconciling")
			}
			s := obj.Status
			if s.ObservedGeneration != 3 || s.LastHandledReconcileAt != "now" || !s.LastAutomationRunTime.Time.Equal(run) {
				t.Errorf("status %+v", s)
			}
			if (s.LastPushCommit == "abc") != tt.pushed || (s.LastPushTime != nil) != tt.pushed {
				t.Errorf("push fields %q %v", s.LastPushCommit, s.LastPushTime)
			}
			if (s.ObservedSourceRevision != "") != tt.observing || (len(s.ObservedPolicies) == 1) != tt.observing {
				t.Errorf("observed %q %v", s.ObservedSourceRevision, s.ObservedPolicies)
			}
		})
	}
}
