package imagepolicy

import (
	"errors"
	"testing"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestReadyMessage(t *testing.T) {
	ref := func(tag, digest string) *imagev1.ImageRef {
		return &imagev1.ImageRef{Name: "ghcr.io/stefanprodan/podinfo", Tag: tag, Digest: digest}
	}
	tests := []struct {
		latest, previous *imagev1.ImageRef
		want             string
	}{
		{ref("5.0.3", ""), nil, "Latest image tag for ghcr.io/stefanprodan/podinfo resolved to 5.0.3"},
		{ref("5.0.3", "sha256:aa"), nil, "Latest image tag for ghcr.io/stefanprodan/podinfo resolved to 5.0.3 with digest sha256:aa"},
		{ref("5.0.3", ""), ref("5.0.2", ""), "Latest image tag for ghcr.io/stefanprodan/podinfo resolved to 5.0.3 (previously ghcr.io/stefanprodan/podinfo:5.0.2)"},
		{ref("5.0.3", "sha256:bb"), ref("5.0.3", "sha256:aa"),
			"Latest image tag for ghcr.io/stefanprodan/podinfo resolved to 5.0.3 with digest sha256:bb (previously ghcr.io/stefanprodan/podinfo:5.0.3@sha256:aa)"},
		{ref("5.0.3", ""), ref("5.0.3", ""), "Latest image tag for ghcr.io/stefanprodan/podinfo resolved to 5.0.3"},
	}
	for _, tt := range tests {
		if got := ReadyMessage(tt.latest, tt.previous); got != tt.want {
			t.Errorf("ReadyMessage = %q, want %q", got, tt.want)
		}
	}
}

func TestApplyStatus(t *testing.T) {
	obj := &imagev1.ImagePolicy{}
	first := &imagev1.ImageRef{Name: "r/app", Tag: "1.0.0"}
	applyStatus(obj, first, nil)
	if *obj.Status.LatestRef != *first || obj.Status.ObservedPreviousRef != nil || !conditions.IsReady(obj) {
		t.Fatalf("first election: %+v", obj.Status)
	}
	applyStatus(obj, &imagev1.ImageRef{Name: "r/app", Tag: "1.0.0"}, nil)
	if obj.Status.ObservedPreviousRef != nil {
		t.Errorf("the same ref moved to observedPreviousRef: %+v", obj.Status.ObservedPreviousRef)
	}
	second := &imagev1.ImageRef{Name: "r/app", Tag: "1.1.0"}
	applyStatus(obj, second, nil)
	if *obj.Status.LatestRef != *second || *obj.Status.ObservedPreviousRef != *first {
		t.Errorf("second election: latest %+v previous %+v", obj.Status.LatestRef, obj.Status.ObservedPreviousRef)
	}
	applyStatus(obj, nil, &errs.Waiting{Err: errors.New("no tags in database"), Reason: imagev1.DependencyNotReadyReason})
	c := conditions.Get(obj, meta.ReadyCondition)
	if c.Status != "False" || c.Reason != imagev1.DependencyNotReadyReason || *obj.Status.LatestRef != *second {
		t.Errorf("failure: Ready %+v, latestRef %+v (kept)", c, obj.Status.LatestRef)
	}
	applyStatus(obj, nil, &errs.Stalling{Err: errors.New("invalid policy: given ImagePolicyChoice object is invalid"), Reason: InvalidPolicyReason})
	if !conditions.IsTrue(obj, meta.StalledCondition) {
		t.Error("an invalid policy stalls")
	}
}
