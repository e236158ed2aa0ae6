package artifactgenerator

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestApplyStatus(t *testing.T) {
	ref := func(name, digest string) sourceextensionsv1beta1.ExternalArtifactReference {
		return sourceextensionsv1beta1.ExternalArtifactReference{Namespace: "ns", Name: name, Digest: digest, Filename: digest + ".tar.gz"}
	}
	old := []sourceextensionsv1beta1.ExternalArtifactReference{ref("a", "1"), ref("b", "1")}
	tests := []struct {
		name          string
		out           *outcome
		err           error
		wantReady     metav1.ConditionStatus
		wantReason    string
		wantMessage   string
		wantStalled   bool
		wantInventory []sourceextensionsv1beta1.ExternalArtifactReference
		wantDigest    string
	}{
		{
			name: "built", out: &outcome{digest: "sha256:new", inventory: []sourceextensionsv1beta1.ExternalArtifactReference{ref("a", "2")}},
			wantReady: metav1.ConditionTrue, wantReason: meta.SucceededReason,
			wantMessage:   "reconciliation succeeded, generated 1 artifact(s)",
			wantInventory: []sourceextensionsv1beta1.ExternalArtifactReference{ref("a", "2")}, wantDigest: "sha256:new",
		},
		{
			name: "up to date keeps everything", out: &outcome{upToDate: true, digest: "sha256:old"},
			wantReady: metav1.ConditionTrue, wantReason: meta.SucceededReason, wantMessage: "reconciliation succeeded, generated 2 artifact(s)",
			wantInventory: old, wantDigest: "sha256:old",
		},
		{
			name:      "build failure names the artifact and keeps what was generated",
			out:       &outcome{failedArtifact: "b", failedStep: "build", inventory: []sourceextensionsv1beta1.ExternalArtifactReference{ref("a", "2"), ref("c", "1")}},
			err:       &errs.Generic{Err: errors.New("boom"), Reason: meta.BuildFailedReason},
			wantReady: metav1.ConditionFalse, wantReason: meta.BuildFailedReason, wantMessage: "b build failed: boom",
			wantInventory: []sourceextensionsv1beta1.ExternalArtifactReference{ref("a", "2"), ref("b", "1"), ref("c", "1")}, wantDigest: "sha256:old",
		},
		{
			name: "spec error stalls", out: &outcome{},
			err:       &errs.Stalling{Err: errors.New("duplicate source alias 'a' found"), Reason: sourceextensionsv1beta1.ValidationFailedReason},
			wantReady: metav1.ConditionFalse, wantReason: sourceextensionsv1beta1.ValidationFailedReason,
			wantMessage: "duplicate source alias 'a' found", wantStalled: true, wantInventory: old, wantDigest: "sha256:old",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &sourceextensionsv1beta1.ArtifactGenerator{
				ObjectMeta: metav1.ObjectMeta{Generation: 2, Annotations: map[string]string{meta.ReconcileRequestAnnotation: "now"}},
				Status:     sourceextensionsv1beta1.ArtifactGeneratorStatus{Inventory: old, ObservedSourcesDigest: "sha256:old"},
			}
			conditions.MarkReady(obj, meta.SucceededReason, "%s", succeeded(2))
			r := &Reconciler{}
			r.kind(context.Background()).WriteStatus(obj, tt.out, tt.err)
			ready := conditions.Get(obj, meta.ReadyCondition)
			if ready.Status != tt.wantReady || ready.Reason != tt.wantReason || ready.Message != tt.wantMessage {
				t.Errorf("Ready = %s %s %q", ready.Status, ready.Reason, ready.Message)
			}
			if got := conditions.IsTrue(obj, meta.StalledCondition); got != tt.wantStalled {
				t.Errorf("Stalled = %v", got)
			}
			if tt.err == nil && conditions.Get(obj, meta.ReconcilingCondition) != nil {
				t.Error("Reconciling left after a success")
			}
			if len(obj.Status.Inventory) != len(tt.wantInventory) {
				t.Fatalf("inventory %v, want %v", obj.Status.Inventory, tt.wantInventory)
			}
			for i := range tt.wantInventory {
				if obj.Status.Inventory[i] != tt.wantInventory[i] {
					t.Errorf("inventory %v, want %v", obj.Status.Inventory, tt.wantInventory)
				}
			}
			if obj.Status.ObservedSourcesDigest != tt.wantDigest || obj.Status.LastHandledReconcileAt != "now" {
				t.Errorf("digest %q, lastHandledReconcileAt %q", obj.Status.ObservedSourcesDigest, obj.Status.LastHandledReconcileAt)
			}
		})
	}
}

// TestSourcesDigest pins the digest to source-watcher's formula: a value
// written by Flux reads as unchanged under weir.
func TestSourcesDigest(t *testing.T) {
	got := sourcesDigest(map[string]observedSource{
		"b": {digest: "sha256:2", revision: "main@sha1:2", url: "http://x/b"},
		"a": {digest: "sha256:1", revision: "main@sha1:1", url: "http://x/a"},
	})
	// printf 'a=[digest=sha256:1,revision=main@sha1:1,url=http://x/a]|b=[digest=sha256:2,revision=main@sha1:2,url=http://x/b]' | sha256sum
	const want = "sha256:0e1ac673435deb0eccf5ee4328eb83fe3827d949100c3b2146637447b591a0f4"
	if got != want {
		t.Errorf("digest %q, want %q", got, want)
	}
}

func TestSetRevisions(t *testing.T) {
	sources := map[string]observedSource{
		"git": {revision: "main@sha1:abc"},
		"oci": {revision: "v1@sha256:def", originRevision: "main@sha1:123"},
	}
	tests := []struct {
		name                   string
		spec                   sourceextensionsv1beta1.OutputArtifact
		wantRevision, wantOrig string
	}{
		{"content digest", sourceextensionsv1beta1.OutputArtifact{}, "latest@sha256:x", ""},
		{"revision from an alias", sourceextensionsv1beta1.OutputArtifact{Revision: "@git"}, "main@sha1:abc", ""},
		{"origin revision of an OCI source", sourceextensionsv1beta1.OutputArtifact{OriginRevision: "@oci"}, "latest@sha256:x", "main@sha1:123"},
		{"origin revision falls back to the revision", sourceextensionsv1beta1.OutputArtifact{OriginRevision: "@git"}, "latest@sha256:x", "main@sha1:abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &meta.Artifact{Revision: "latest@sha256:x"}
			setRevisions(a, tt.spec, sources)
			if a.Revision != tt.wantRevision || a.Metadata[sourceextensionsv1beta1.OriginRevisionAnnotation] != tt.wantOrig {
				t.Errorf("revision %q metadata %v", a.Revision, a.Metadata)
			}
		})
	}
}
