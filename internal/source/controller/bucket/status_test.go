package bucket

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/conditions/conditionstest"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestApplyStatus(t *testing.T) {
	const old = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const newer = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	stored := &meta.Artifact{Revision: old, Digest: "sha256:aa", URL: "http://storage/bucket/ns/b/1111.tar.gz"}
	ignore := "*.md\n"
	tests := []struct {
		name       string
		out        *outcome
		err        error
		ready      metav1.ConditionStatus
		reason     string
		message    string
		conditions map[string]metav1.ConditionStatus // "" means absent
		url        string
	}{
		{
			name:  "new artifact",
			out:   &outcome{revision: newer, artifact: &meta.Artifact{Revision: newer, URL: "http://storage/new.tar.gz"}, newArtifact: true, fetched: 3},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact: revision '" + newer + "'",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: "",
				sourcev1.ArtifactOutdatedCondition: "", meta.ReconcilingCondition: "", meta.StalledCondition: "",
			},
			url: "http://storage/new.tar.gz",
		},
		{
			name:  "unchanged bucket keeps the artifact",
			out:   &outcome{revision: old, artifact: stored},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact: revision '" + old + "'",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: "",
			},
			url: stored.URL,
		},
		{
			name: "download failed with a newer upstream", out: &outcome{revision: newer, artifact: stored},
			err:   &errs.Generic{Err: errors.New("fetch from bucket 'b' failed: connection reset"), Reason: sourcev1.BucketOperationFailedReason},
			ready: metav1.ConditionFalse, reason: sourcev1.BucketOperationFailedReason,
			message: "fetch from bucket 'b' failed: connection reset",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.FetchFailedCondition: metav1.ConditionTrue, sourcev1.ArtifactOutdatedCondition: metav1.ConditionTrue,
				meta.ReconcilingCondition: metav1.ConditionTrue, meta.StalledCondition: "",
			},
			url: stored.URL,
		},
		{
			name: "missing secret", out: &outcome{artifact: stored},
			err:   &errs.Generic{Err: errors.New("failed to get secret 'ns/creds': not found"), Reason: sourcev1.AuthenticationFailedReason},
			ready: metav1.ConditionFalse, reason: sourcev1.AuthenticationFailedReason, message: "failed to get secret 'ns/creds': not found",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.FetchFailedCondition: metav1.ConditionTrue, sourcev1.ArtifactOutdatedCondition: "",
			},
			url: stored.URL,
		},
		{
			name: "unsupported provider stalls", out: &outcome{artifact: stored},
			err:   &errs.Stalling{Err: errors.New("provider 'aws' is not supported by weir yet"), Reason: sourcev1.InvalidProviderConfigurationReason},
			ready: metav1.ConditionFalse, reason: sourcev1.InvalidProviderConfigurationReason, message: "provider 'aws' is not supported by weir yet",
			conditions: map[string]metav1.ConditionStatus{
				meta.StalledCondition: metav1.ConditionTrue, meta.ReconcilingCondition: "", sourcev1.FetchFailedCondition: metav1.ConditionTrue,
			},
			url: stored.URL,
		},
		{
			name: "archive failed", out: &outcome{revision: newer, artifact: stored},
			err:   &errs.Generic{Err: errors.New("unable to archive artifact to storage: disk full"), Reason: sourcev1.ArchiveOperationFailedReason},
			ready: metav1.ConditionFalse, reason: sourcev1.ArchiveOperationFailedReason, message: "unable to archive artifact to storage: disk full",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.StorageOperationFailedCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: "",
			},
			url: stored.URL,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &sourcev1.Bucket{ObjectMeta: metav1.ObjectMeta{
				Generation: 4, Annotations: map[string]string{meta.ReconcileRequestAnnotation: "token-1"},
			}}
			obj.Spec.Ignore = &ignore
			obj.Status.Artifact, obj.Status.URL = stored, stored.URL
			// Left over from an earlier failure; success must clear it.
			conditions.MarkTrue(obj, sourcev1.FetchFailedCondition, sourcev1.BucketOperationFailedReason, "earlier")
			(&Reconciler{}).kind().WriteStatus(obj, tt.out, tt.err)
			conditionstest.Expect(t, obj, conditionstest.Want{Ready: tt.ready, Reason: tt.reason, Message: tt.message, Others: tt.conditions})
			if obj.Status.ObservedGeneration != 4 || obj.Status.LastHandledReconcileAt != "token-1" {
				t.Errorf("observedGeneration %d, lastHandledReconcileAt %q", obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
			}
			if obj.Status.URL != tt.url {
				t.Errorf("status.url = %q, want %q", obj.Status.URL, tt.url)
			}
			if tt.err != nil && obj.Status.Artifact != stored {
				t.Error("a failure replaced the stored artifact")
			}
			if tt.err == nil && (obj.Status.ObservedIgnore == nil || *obj.Status.ObservedIgnore != ignore) {
				t.Errorf("observedIgnore = %v", obj.Status.ObservedIgnore)
			}
			if tt.err != nil && obj.Status.ObservedIgnore != nil {
				t.Error("a failure recorded observedIgnore")
			}
		})
	}
}
