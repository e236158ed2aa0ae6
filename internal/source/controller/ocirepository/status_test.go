package ocirepository

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

const (
	storedRev = "v1@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	newerRev  = "v1@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func TestApplyStatus(t *testing.T) {
	stored := &meta.Artifact{Revision: storedRev, Digest: "sha256:aa", URL: "http://storage/ocirepository/ns/app/1111.tar.gz"}
	newer := &meta.Artifact{Revision: newerRev, Digest: "sha256:bb", URL: "http://storage/ocirepository/ns/app/2222.tar.gz"}
	verify := &sourcev1.OCIRepositoryVerification{OCIVerification: sourcev1.OCIVerification{Provider: "cosign"}}
	tests := []struct {
		name       string
		verify     *sourcev1.OCIRepositoryVerification
		before     []metav1.Condition
		out        *outcome
		err        error
		ready      metav1.ConditionStatus
		reason     string
		message    string
		conditions map[string]metav1.ConditionStatus // "" means absent
		wantURL    string
	}{
		{
			name: "new artifact", out: &outcome{revision: newerRev, artifact: newer, newArtifact: true},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact for digest '" + newerRev + "'",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: "",
				sourcev1.SourceVerifiedCondition: "", meta.ReconcilingCondition: "", meta.StalledCondition: "",
			},
			wantURL: newer.URL,
		},
		{
			name: "verified new artifact", verify: verify,
			out:   &outcome{revision: newerRev, artifact: newer, newArtifact: true, verifiedBy: "cosign.pub"},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact for digest '" + newerRev + "'",
			conditions: map[string]metav1.ConditionStatus{sourcev1.SourceVerifiedCondition: metav1.ConditionTrue},
			wantURL:    newer.URL,
		},
		{
			name: "unchanged and verified before", verify: verify,
			before: []metav1.Condition{{Type: sourcev1.SourceVerifiedCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason}},
			out:    &outcome{revision: storedRev, artifact: stored},
			ready:  metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact for digest '" + storedRev + "'",
			conditions: map[string]metav1.ConditionStatus{sourcev1.SourceVerifiedCondition: metav1.ConditionTrue},
			wantURL:    stored.URL,
		},
		{
			name: "pull failed with a newer upstream", out: &outcome{revision: newerRev, ref: "host/app:v1", artifact: stored},
			err:   &errs.Generic{Err: errors.New("failed to pull artifact from 'oci://host/app': connection refused"), Reason: sourcev1.OCIPullFailedReason},
			ready: metav1.ConditionFalse, reason: sourcev1.OCIPullFailedReason,
			message: "failed to pull artifact from 'oci://host/app': connection refused",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.FetchFailedCondition: metav1.ConditionTrue, sourcev1.ArtifactOutdatedCondition: metav1.ConditionTrue,
				sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue,
				meta.ReconcilingCondition:           metav1.ConditionTrue, meta.StalledCondition: "",
			},
			wantURL: stored.URL,
		},
		{
			name: "invalid URL stalls", out: &outcome{artifact: stored},
			err:   &errs.Stalling{Err: errors.New("URL validation failed for 'https://x': bad"), Reason: sourcev1.URLInvalidReason},
			ready: metav1.ConditionFalse, reason: sourcev1.URLInvalidReason, message: "URL validation failed for 'https://x': bad",
			conditions: map[string]metav1.ConditionStatus{
				meta.StalledCondition: metav1.ConditionTrue, meta.ReconcilingCondition: "", sourcev1.FetchFailedCondition: metav1.ConditionTrue,
				sourcev1.ArtifactOutdatedCondition: "",
			},
			wantURL: stored.URL,
		},
		{
			name: "verification failed", verify: verify,
			before: []metav1.Condition{{Type: sourcev1.SourceVerifiedCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason}},
			out:    &outcome{revision: newerRev, ref: "host/app:v1", artifact: stored},
			err:    &errs.Generic{Err: errors.New("failed to verify the signature using provider 'cosign': no matching signatures"), Reason: sourcev1.VerificationError},
			ready:  metav1.ConditionFalse, reason: sourcev1.VerificationError, message: "failed to verify the signature using provider 'cosign': no matching signatures",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.SourceVerifiedCondition: metav1.ConditionFalse, sourcev1.FetchFailedCondition: "",
				sourcev1.ArtifactOutdatedCondition: metav1.ConditionTrue,
			},
			wantURL: stored.URL,
		},
		{
			name: "a failed verification not repeated is dropped", verify: verify,
			before: []metav1.Condition{{Type: sourcev1.SourceVerifiedCondition, Status: metav1.ConditionFalse, Reason: sourcev1.VerificationError}},
			out:    &outcome{artifact: stored},
			err:    &errs.Generic{Err: errors.New("failed to determine artifact digest: registry unreachable"), Reason: sourcev1.OCIPullFailedReason},
			ready:  metav1.ConditionFalse, reason: sourcev1.OCIPullFailedReason, message: "failed to determine artifact digest: registry unreachable",
			conditions: map[string]metav1.ConditionStatus{sourcev1.SourceVerifiedCondition: ""},
			wantURL:    stored.URL,
		},
		{
			name: "verification turned off", out: &outcome{revision: storedRev, artifact: stored},
			before: []metav1.Condition{{Type: sourcev1.SourceVerifiedCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason}},
			ready:  metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact for digest '" + storedRev + "'",
			conditions: map[string]metav1.ConditionStatus{sourcev1.SourceVerifiedCondition: ""},
			wantURL:    stored.URL,
		},
		{
			name: "layer failure on the first run", out: &outcome{revision: newerRev},
			err:   &errs.Generic{Err: errors.New("failed to extract layer contents from artifact: untar: unsafe archive entry"), Reason: sourcev1.OCILayerOperationFailedReason},
			ready: metav1.ConditionFalse, reason: sourcev1.OCILayerOperationFailedReason,
			message: "failed to extract layer contents from artifact: untar: unsafe archive entry",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.FetchFailedCondition: metav1.ConditionTrue, sourcev1.ArtifactInStorageCondition: "",
				sourcev1.ArtifactOutdatedCondition: "",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{
				Generation: 4, Annotations: map[string]string{meta.ReconcileRequestAnnotation: "token-1"},
			}}
			obj.Spec.Verify = tt.verify
			if tt.out.artifact == stored {
				obj.Status.Artifact = stored
				obj.Status.URL = stored.URL
				conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, meta.SucceededReason, "stored artifact for digest '%s'", storedRev)
			}
			for _, c := range tt.before {
				conditions.Set(obj, c.Type, c.Status, c.Reason, "before")
			}
			(&Reconciler{}).kind().WriteStatus(obj, tt.out, tt.err)
			conditionstest.Expect(t, obj, conditionstest.Want{Ready: tt.ready, Reason: tt.reason, Message: tt.message, Others: tt.conditions})
			if obj.Status.ObservedGeneration != 4 || obj.Status.LastHandledReconcileAt != "token-1" {
				t.Errorf("observedGeneration %d, lastHandledReconcileAt %q", obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
			}
			if tt.err != nil && tt.out.artifact == stored && obj.Status.Artifact != stored {
				t.Error("a failure replaced the stored artifact")
			}
			if obj.Status.URL != tt.wantURL {
				t.Errorf("status.url = %q, want %q", obj.Status.URL, tt.wantURL)
			}
		})
	}
}

func TestArtifactOutdatedMessage(t *testing.T) {
	obj := &sourcev1.OCIRepository{}
	obj.Status.Artifact = &meta.Artifact{Revision: storedRev}
	(&Reconciler{}).kind().WriteStatus(obj, &outcome{revision: newerRev, ref: "127.0.0.1:5000/org/app:v1", artifact: obj.Status.Artifact},
		&errs.Generic{Err: errors.New("x"), Reason: sourcev1.OCIPullFailedReason})
	c := conditions.Get(obj, sourcev1.ArtifactOutdatedCondition)
	if want := "new revision '" + newerRev + "' for '127.0.0.1:5000/org/app:v1'"; c == nil || c.Reason != "NewRevision" || c.Message != want {
		t.Errorf("ArtifactOutdated = %+v, want NewRevision %q", c, want)
	}
}

func TestObservedSpecUnchanged(t *testing.T) {
	ignore, other := "*.md\n", "*.txt\n"
	tests := []struct {
		name                       string
		ignore, observedIgnore     *string
		selector, observedSelector *sourcev1.OCILayerSelector
		want                       bool
	}{
		{name: "nothing set", want: true},
		{name: "same ignore", ignore: &ignore, observedIgnore: &ignore, want: true},
		{name: "ignore added", ignore: &ignore, want: false},
		{name: "ignore removed", observedIgnore: &ignore, want: false},
		{name: "ignore changed", ignore: &other, observedIgnore: &ignore, want: false},
		{name: "explicit extract equals default", selector: &sourcev1.OCILayerSelector{Operation: "extract"}, want: true},
		{name: "copy instead of extract", selector: &sourcev1.OCILayerSelector{Operation: "copy"}, want: false},
		{name: "media type added", selector: &sourcev1.OCILayerSelector{MediaType: "x"}, want: false},
		{name: "same media type", selector: &sourcev1.OCILayerSelector{MediaType: "x"}, observedSelector: &sourcev1.OCILayerSelector{MediaType: "x", Operation: "extract"}, want: true},
	}
	for _, tt := range tests {
		obj := &sourcev1.OCIRepository{}
		obj.Spec.Ignore, obj.Status.ObservedIgnore = tt.ignore, tt.observedIgnore
		obj.Spec.LayerSelector, obj.Status.ObservedLayerSelector = tt.selector, tt.observedSelector
		if got := observedSpecUnchanged(obj); got != tt.want {
			t.Errorf("%s: observedSpecUnchanged = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNeedsVerification(t *testing.T) {
	verified := func(status metav1.ConditionStatus, gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: sourcev1.SourceVerifiedCondition, Status: status, ObservedGeneration: gen}}
	}
	tests := []struct {
		name       string
		stored     string
		conditions []metav1.Condition
		want       bool
	}{
		{name: "no artifact", conditions: verified(metav1.ConditionTrue, 2), want: true},
		{name: "new revision", stored: storedRev, conditions: verified(metav1.ConditionTrue, 2), want: true},
		{name: "verified at this generation", stored: newerRev, conditions: verified(metav1.ConditionTrue, 2), want: false},
		{name: "verified at an older generation", stored: newerRev, conditions: verified(metav1.ConditionTrue, 1), want: true},
		{name: "failed before", stored: newerRev, conditions: verified(metav1.ConditionFalse, 2), want: true},
		{name: "never verified", stored: newerRev, want: true},
	}
	for _, tt := range tests {
		obj := &sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		if tt.stored != "" {
			obj.Status.Artifact = &meta.Artifact{Revision: tt.stored}
		}
		obj.Status.Conditions = tt.conditions
		if got := needsVerification(obj, newerRev); got != tt.want {
			t.Errorf("%s: needsVerification = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNewArtifactMessage(t *testing.T) {
	const url = "oci://ghcr.io/org/app"
	tests := []struct {
		metadata map[string]string
		want     string
	}{
		{nil, "stored artifact with revision '" + storedRev + "' from '" + url + "'"},
		{map[string]string{"org.opencontainers.image.source": "https://github.com/org/app"},
			"stored artifact with revision '" + storedRev + "' from '" + url + "'"},
		{map[string]string{"org.opencontainers.image.source": "https://github.com/org/app", "org.opencontainers.image.revision": "main@sha1:abc"},
			"stored artifact with revision '" + storedRev + "' from '" + url + "', origin source 'https://github.com/org/app', origin revision 'main@sha1:abc'"},
	}
	for _, tt := range tests {
		if got := newArtifactMessage(url, storedRev, tt.metadata); got != tt.want {
			t.Errorf("newArtifactMessage(%v) = %q, want %q", tt.metadata, got, tt.want)
		}
	}
}
