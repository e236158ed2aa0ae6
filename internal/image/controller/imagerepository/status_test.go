package imagerepository

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestApplyStatus(t *testing.T) {
	scan := &imagev1.ScanResult{Revision: "sha256:abc", TagCount: 3, LatestTags: []string{"c", "b", "a"}}
	tests := []struct {
		name                 string
		prior                *imagev1.ScanResult
		out                  *outcome
		err                  error
		ready, reason, msg   string
		stalled, reconciling bool
		tagLimit             string
	}{
		{name: "scanned", out: &outcome{canonical: "ghcr.io/a/b", scan: scan, listed: 3},
			ready: "True", reason: meta.SucceededReason, msg: "successful scan: found 3 tags with checksum sha256:abc"},
		{name: "not due: the last scan stands", prior: scan, out: &outcome{canonical: "ghcr.io/a/b"},
			ready: "True", reason: meta.SucceededReason, msg: "successful scan: found 3 tags with checksum sha256:abc"},
		{name: "capped", out: &outcome{canonical: "ghcr.io/a/b", scan: scan, listed: 5, dropped: 2},
			ready: "True", reason: meta.SucceededReason, msg: "successful scan: found 3 tags with checksum sha256:abc",
			tagLimit: "the registry lists 5 tags after the exclusion list, more than the 3 kept per repository (--max-tags-per-image-repository): kept the 3 greatest in version order, dropped 2"},
		{name: "scan failed", prior: scan, out: &outcome{},
			err:   &errs.Generic{Err: errors.New("scan failed: authentication failed: UNAUTHORIZED"), Reason: imagev1.ReadOperationFailedReason},
			ready: "False", reason: imagev1.ReadOperationFailedReason, msg: "scan failed: authentication failed: UNAUTHORIZED", reconciling: true},
		{name: "stalled", out: &outcome{},
			err:   &errs.Stalling{Err: errors.New(".spec.image value should not contain a tag; remove ':v1'"), Reason: imagev1.ImageURLInvalidReason},
			ready: "False", reason: imagev1.ImageURLInvalidReason, msg: ".spec.image value should not contain a tag; remove ':v1'", stalled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &imagev1.ImageRepository{ObjectMeta: metav1.ObjectMeta{Generation: 2,
				Annotations: map[string]string{meta.ReconcileRequestAnnotation: "token"}}}
			obj.Spec.Interval = metav1.Duration{Duration: time.Minute}
			obj.Status.LastScanResult = tt.prior
			applyStatus(obj, tt.out, tt.err)
			c := conditions.Get(obj, meta.ReadyCondition)
			if c == nil || string(c.Status) != tt.ready || c.Reason != tt.reason || c.Message != tt.msg {
				t.Fatalf("Ready = %+v, want %s %s %q", c, tt.ready, tt.reason, tt.msg)
			}
			if conditions.IsTrue(obj, meta.StalledCondition) != tt.stalled || conditions.IsTrue(obj, meta.ReconcilingCondition) != tt.reconciling {
				t.Errorf("Stalled %v Reconciling %v", conditions.IsTrue(obj, meta.StalledCondition), conditions.IsTrue(obj, meta.ReconcilingCondition))
			}
			if got := conditions.Get(obj, TagLimitCondition); (got == nil) != (tt.tagLimit == "") || (got != nil && got.Message != tt.tagLimit) {
				t.Errorf("TagLimitExceeded = %+v, want %q", got, tt.tagLimit)
			}
			if obj.Status.ObservedGeneration != 2 || obj.Status.LastHandledReconcileAt != "token" {
				t.Errorf("observedGeneration %d, lastHandledReconcileAt %q", obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
			}
			if tt.err == nil && (obj.Status.CanonicalImageName != "ghcr.io/a/b" || len(obj.Status.ObservedExclusionList) != 1) {
				t.Errorf("canonicalImageName %q, observedExclusionList %v", obj.Status.CanonicalImageName, obj.Status.ObservedExclusionList)
			}
		})
	}
}

func TestSameContent(t *testing.T) {
	for _, tt := range []struct {
		a, b []string
		want bool
	}{
		{[]string{"a", "b"}, []string{"b", "a"}, true},
		{[]string{"a", "a"}, []string{"a", "b"}, false},
		{nil, []string{}, true},
		{[]string{"a"}, nil, false},
	} {
		if got := sameContent(tt.a, tt.b); got != tt.want {
			t.Errorf("sameContent(%v, %v) = %v", tt.a, tt.b, got)
		}
	}
}
