package helmrepository

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

const (
	storedRev = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	newerRev  = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func TestApplyStatus(t *testing.T) {
	stored := &meta.Artifact{Revision: storedRev, Digest: "sha256:aa", URL: "http://storage/helmrepository/ns/podinfo/index-1111.yaml"}
	newer := &meta.Artifact{Revision: newerRev, Digest: "sha256:bb", URL: "http://storage/helmrepository/ns/podinfo/index-2222.yaml"}
	fetchErr := fetchError(fmt.Errorf("failed to fetch x : %w", helmrepo.ErrFetch))
	tests := []struct {
		name       string
		before     *meta.Artifact
		out        *outcome
		err        error
		ready      metav1.ConditionStatus
		reason     string
		message    string
		conditions map[string]metav1.ConditionStatus // "" means absent
		wantURL    string
	}{
		{
			name: "new index", before: stored, out: &outcome{revision: newerRev, artifact: newer, newArtifact: true},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact: revision '" + newerRev + "'",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: "",
				sourcev1.ArtifactOutdatedCondition: "", meta.ReconcilingCondition: "", meta.StalledCondition: "",
			},
			wantURL: newer.URL,
		},
		{
			name: "unchanged index", before: stored, out: &outcome{revision: storedRev, artifact: stored},
			ready: metav1.ConditionTrue, reason: meta.SucceededReason, message: "stored artifact: revision '" + storedRev + "'",
			conditions: map[string]metav1.ConditionStatus{sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue},
			wantURL:    stored.URL,
		},
		{
			name: "fetch failed keeps the artifact", before: stored, out: &outcome{artifact: stored}, err: fetchErr,
			ready: metav1.ConditionFalse, reason: meta.FailedReason, message: "failed to fetch Helm repository index: failed to fetch x : fetch failed",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.FetchFailedCondition: metav1.ConditionTrue, sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue,
				sourcev1.ArtifactOutdatedCondition: "", meta.ReconcilingCondition: metav1.ConditionTrue, meta.StalledCondition: "",
			},
			wantURL: stored.URL,
		},
		{
			name: "storing a newer index failed", before: stored, out: &outcome{revision: newerRev, artifact: stored},
			err:   &errs.Generic{Err: errors.New("unable to save artifact to storage: disk full"), Reason: sourcev1.ArchiveOperationFailedReason},
			ready: metav1.ConditionFalse, reason: sourcev1.ArchiveOperationFailedReason, message: "unable to save artifact to storage: disk full",
			conditions: map[string]metav1.ConditionStatus{
				sourcev1.StorageOperationFailedCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: "",
				sourcev1.ArtifactOutdatedCondition: metav1.ConditionTrue,
			},
			wantURL: stored.URL,
		},
		{
			name: "invalid URL stalls", out: &outcome{},
			err:   clientError(fmt.Errorf("invalid Helm repository URL: no host: %w", helmrepo.ErrInvalidURL)),
			ready: metav1.ConditionFalse, reason: sourcev1.URLInvalidReason, message: "invalid Helm repository URL: no host: invalid Helm repository URL",
			conditions: map[string]metav1.ConditionStatus{
				meta.StalledCondition: metav1.ConditionTrue, meta.ReconcilingCondition: "", sourcev1.FetchFailedCondition: metav1.ConditionTrue,
				sourcev1.ArtifactInStorageCondition: "",
			},
		},
		{
			name: "artifact gone from storage and fetch failed", before: stored, out: &outcome{}, err: fetchErr,
			ready: metav1.ConditionFalse, reason: meta.FailedReason, message: fetchErr.Error(),
			conditions: map[string]metav1.ConditionStatus{sourcev1.ArtifactInStorageCondition: "", sourcev1.FetchFailedCondition: metav1.ConditionTrue},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Generation: 3, Annotations: map[string]string{meta.ReconcileRequestAnnotation: "now"}}}
			obj.Status.Artifact = tt.before
			if tt.before != nil {
				conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, meta.SucceededReason, "%s", readyMessage(tt.before.Revision))
				conditions.MarkTrue(obj, sourcev1.ArtifactOutdatedCondition, sourcev1.NewRevisionReason, "stale")
			}
			(&Reconciler{}).kind().WriteStatus(obj, tt.out, tt.err)
			ready := conditions.Get(obj, meta.ReadyCondition)
			if ready == nil || ready.Status != tt.ready || ready.Reason != tt.reason || ready.Message != tt.message {
				t.Fatalf("Ready = %+v, want %s %s %q", ready, tt.ready, tt.reason, tt.message)
			}
			for typ, want := range tt.conditions {
				got := metav1.ConditionStatus("")
				if c := conditions.Get(obj, typ); c != nil {
					got = c.Status
				}
				if got != want {
					t.Errorf("%s = %q, want %q", typ, got, want)
				}
			}
			if obj.Status.URL != tt.wantURL || obj.Status.ObservedGeneration != 3 || obj.Status.LastHandledReconcileAt != "now" {
				t.Errorf("status = %+v", obj.Status)
			}
		})
	}
}

// TestApplyStaticStatus: an OCI HelmRepository keeps no status, whatever
// its provider (the login happens when a HelmChart pulls).
func TestApplyStaticStatus(t *testing.T) {
	for _, provider := range []string{"", "generic", "aws", "gcp"} {
		t.Run("provider "+provider, func(t *testing.T) {
			obj := &sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
			obj.Spec.Type, obj.Spec.Provider = sourcev1.HelmRepositoryTypeOCI, provider
			obj.Status = sourcev1.HelmRepositoryStatus{ObservedGeneration: -1, URL: "http://old", Artifact: &meta.Artifact{Path: "x"}}
			conditions.MarkTrue(obj, meta.ReadyCondition, meta.SucceededReason, "old")
			applyStaticStatus(obj)
			if s := obj.Status; s.ObservedGeneration != 0 || s.Conditions != nil || s.URL != "" || s.Artifact != nil {
				t.Errorf("status %+v, want empty", s)
			}
		})
	}
}

func TestErrorReasons(t *testing.T) {
	kind := func(k error) error { return fmt.Errorf("boom: %w", k) }
	tests := []struct {
		name     string
		err      error
		reason   string
		stalling bool
		prefix   bool
	}{
		{"client: invalid URL", clientError(kind(helmrepo.ErrInvalidURL)), sourcev1.URLInvalidReason, true, false},
		{"client: unsupported", clientError(kind(helmrepo.ErrUnsupported)), sourcev1.AuthenticationFailedReason, true, false},
		{"client: secret", clientError(kind(helmrepo.ErrAuth)), sourcev1.AuthenticationFailedReason, false, false},
		{"fetch: refused", fetchError(kind(helmrepo.ErrAuth)), sourcev1.AuthenticationFailedReason, false, true},
		{"fetch: not an index", fetchError(kind(helmrepo.ErrInvalidIndex)), sourcev1.IndexationFailedReason, false, false},
		{"fetch: too large", fetchError(kind(helmrepo.ErrTooLarge)), meta.FailedReason, false, true},
		{"fetch: 404", fetchError(kind(helmrepo.ErrNotFound)), meta.FailedReason, false, true},
		{"fetch: unreachable", fetchError(kind(helmrepo.ErrFetch)), meta.FailedReason, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errs.Reason(tt.err, ""); got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
			if errs.IsStalling(tt.err) != tt.stalling {
				t.Errorf("stalling = %v", !tt.stalling)
			}
			if has := strings.HasPrefix(tt.err.Error(), "failed to fetch Helm repository index: "); has != tt.prefix {
				t.Errorf("message %q", tt.err)
			}
		})
	}
}

func TestNewArtifactMessage(t *testing.T) {
	size := func(n int64) *int64 { return &n }
	for _, tt := range []struct {
		size *int64
		want string
	}{
		{size(30880), "stored fetched index of size 30.88kB from 'https://stefanprodan.github.io/podinfo'"},
		{size(999), "stored fetched index of size 999B from 'https://stefanprodan.github.io/podinfo'"},
		{size(21_474_836), "stored fetched index of size 21.47MB from 'https://stefanprodan.github.io/podinfo'"},
		{nil, "stored fetched index of unknown size from 'https://stefanprodan.github.io/podinfo'"},
	} {
		if got := newArtifactMessage(&meta.Artifact{Size: tt.size}, "https://stefanprodan.github.io/podinfo"); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestPrevious(t *testing.T) {
	r := &Reconciler{}
	obj := &sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{UID: "u1"}, Spec: sourcev1.HelmRepositorySpec{URL: "https://a"}}
	stored := &meta.Artifact{Revision: storedRev}
	if got := r.previous(obj, nil); got != (helmrepo.Previous{}) {
		t.Errorf("no artifact: %+v", got)
	}
	if got := r.previous(obj, stored); got != (helmrepo.Previous{Digest: storedRev}) {
		t.Errorf("nothing remembered: %+v", got)
	}
	r.remember(obj, &helmrepo.Index{Digest: storedRev, ETag: `"e1"`})
	if got := r.previous(obj, stored); got.ETag != `"e1"` || got.Digest != storedRev {
		t.Errorf("remembered: %+v", got)
	}
	if got := r.previous(obj, &meta.Artifact{Revision: newerRev}); got.ETag != "" {
		t.Errorf("validators of another revision used: %+v", got)
	}
	moved := obj.DeepCopy()
	moved.Spec.URL = "https://b"
	if got := r.previous(moved, stored); got.ETag != "" {
		t.Errorf("validators of another URL used: %+v", got)
	}
	r.forget(obj.UID)
	if got := r.previous(obj, stored); got.ETag != "" {
		t.Errorf("forgotten validators used: %+v", got)
	}
}
