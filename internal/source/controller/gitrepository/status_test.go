package gitrepository

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions/conditionstest"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestApplyStatus(t *testing.T) {
	stored := &meta.Artifact{Revision: "main@sha1:1111111111111111111111111111111111111111", Digest: "sha256:aa"}
	newer := "main@sha1:2222222222222222222222222222222222222222"
	tests := []struct {
		name       string
		out        *outcome
		err        error
		ready      metav1.ConditionStatus
		reason     string
		message    string
		conditions map[string]metav1.ConditionStatus // "" means absent
	}{
		{
			name: "new artifact", out: &outcome{revision: newer, artifact: &meta.Artifact{Revision: newer}, newArtifact: true},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact for revision '" + newer + "'",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: "",
				meta.ReconcilingCondition: "", meta.StalledCondition: "",
			},
		},
		{
			name: "fetch failed with a newer upstream", out: &outcome{revision: newer, artifact: stored},
			err:   &errs.Generic{Err: errors.New("failed to checkout and determine revision: connection refused"), Reason: sourcev1.GitOperationFailedReason},
			ready: metav1.ConditionFalse, reason: sourcev1.GitOperationFailedReason,
			message: "failed to checkout and determine revision: connection refused",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.FetchFailedCondition: metav1.ConditionTrue, sourcev1.ArtifactOutdatedCondition: metav1.ConditionTrue,
				meta.ReconcilingCondition: metav1.ConditionTrue, meta.StalledCondition: "",
			},
		},
		{
			name: "invalid configuration stalls", out: &outcome{artifact: stored},
			err:   &errs.Stalling{Err: errors.New("invalid git configuration: bad url"), Reason: sourcev1.URLInvalidReason},
			ready: metav1.ConditionFalse, reason: sourcev1.URLInvalidReason, message: "invalid git configuration: bad url",
			conditions: map[string]metav1.ConditionStatus{
				meta.StalledCondition: metav1.ConditionTrue, meta.ReconcilingCondition: "",
			},
		},
		{
			name: "verification failed", out: &outcome{revision: newer, artifact: stored},
			err:   &errs.Generic{Err: errors.New("signature verification of commit failed"), Reason: sourcev1.VerificationError},
			ready: metav1.ConditionFalse, reason: sourcev1.VerificationError, message: "signature verification of commit failed",
			conditions: map[string]metav1.ConditionStatus{sourcev1.SourceVerifiedCondition: metav1.ConditionFalse},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{
				Generation: 4, Annotations: map[string]string{meta.ReconcileRequestAnnotation: "token-1"},
			}}
			obj.Status.Artifact = stored
			(&Reconciler{}).kind().WriteStatus(obj, tt.out, tt.err)
			conditionstest.Expect(t, obj, conditionstest.Want{Ready: tt.ready, Reason: tt.reason, Message: tt.message, Others: tt.conditions})
			if obj.Status.ObservedGeneration != 4 || obj.Status.LastHandledReconcileAt != "token-1" {
				t.Errorf("observedGeneration %d, lastHandledReconcileAt %q", obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
			}
			if tt.err != nil && obj.Status.Artifact != stored {
				t.Error("a failure replaced the stored artifact")
			}
		})
	}
}

func TestConfined(t *testing.T) {
	for _, tt := range []struct {
		rel string
		ok  bool
	}{
		{"", true}, {".", true}, {"./deploy", true}, {"a/b", true},
		{"..", false}, {"../x", false}, {"a/../../x", false}, {"/etc", true},
	} {
		got, err := confined("/root", tt.rel)
		if (err == nil) != tt.ok {
			t.Errorf("confined(%q) = %q, %v", tt.rel, got, err)
		}
		if err == nil && got != "/root" && !startsWith(got, "/root/") {
			t.Errorf("confined(%q) = %q escapes", tt.rel, got)
		}
	}
}

func startsWith(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
