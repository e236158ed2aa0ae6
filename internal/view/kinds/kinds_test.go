package kinds

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func generator(generation int64, annotations map[string]string, status map[string]any) *unstructured.Unstructured {
	u := ArtifactGenerator.New()
	u.SetGeneration(generation)
	u.SetAnnotations(annotations)
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

// TestArtifactGeneratorSuspend: a generator is paused by its reconcile
// annotation, any case, and SetSuspended writes that annotation and never
// spec.suspend; other kinds keep spec.suspend.
func TestArtifactGeneratorSuspend(t *testing.T) {
	const key = "source.extensions.fluxcd.io/reconcile"
	tests := []struct {
		name        string
		annotations map[string]string
		suspended   bool
	}{
		{"no annotation", nil, false},
		{"disabled", map[string]string{key: "disabled"}, true},
		{"Disabled, any case", map[string]string{key: "Disabled"}, true},
		{"enabled", map[string]string{key: "enabled"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Suspended(generator(1, tt.annotations, nil)); got != tt.suspended {
				t.Errorf("Suspended = %v, want %v", got, tt.suspended)
			}
		})
	}

	u := generator(1, map[string]string{"team": "a"}, nil)
	SetSuspended(u, true)
	if !Suspended(u) || u.GetAnnotations()[key] != "disabled" || u.GetAnnotations()["team"] != "a" {
		t.Errorf("after SetSuspended(true): %v", u.GetAnnotations())
	}
	SetSuspended(u, false)
	if Suspended(u) || u.GetAnnotations()[key] != "enabled" {
		t.Errorf("after SetSuspended(false): %v", u.GetAnnotations())
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "suspend"); has {
		t.Error("SetSuspended wrote spec.suspend on an ArtifactGenerator")
	}

	k := Kustomization.New()
	SetSuspended(k, true)
	if !Suspended(k) {
		t.Error("a Kustomization is suspended by spec.suspend")
	}
	SetSuspended(k, false)
	if _, has, _ := unstructured.NestedFieldNoCopy(k.Object, "spec", "suspend"); has {
		t.Error("resuming a Kustomization leaves spec.suspend, the flux CLI removes it")
	}
}

// TestArtifactGeneratorReady: source-watcher writes no
// status.observedGeneration; the Ready condition's generation stands in.
func TestArtifactGeneratorReady(t *testing.T) {
	tests := []struct {
		name  string
		obj   *unstructured.Unstructured
		ready bool
	}{
		{"never reconciled", generator(1, nil, nil), false},
		{"ready at generation", generator(2, nil, map[string]any{"conditions": []any{cond("Ready", "True", 2)}}), true},
		{"ready at an older generation", generator(3, nil, map[string]any{"conditions": []any{cond("Ready", "True", 2)}}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ready, err := IsReady(tt.obj, false); ready != tt.ready || err != nil {
				t.Errorf("IsReady = %v, %v; want %v", ready, err, tt.ready)
			}
		})
	}
	u := generator(1, nil, map[string]any{"conditions": []any{cond("Ready", "True", 1)}})
	if got := ArtifactGenerator.SuccessMessage(u); got != "m Ready=True" {
		t.Errorf("SuccessMessage = %q, want the Ready message", got)
	}
}

// TestExternalArtifactKind: the flux CLI's columns (REVISION, SOURCE as
// Kind/namespace/name, no SUSPENDED) and no reconciler to wait for.
func TestExternalArtifactKind(t *testing.T) {
	u := ExternalArtifact.New()
	u.Object["spec"] = map[string]any{"sourceRef": map[string]any{
		"apiVersion": "source.extensions.fluxcd.io/v1beta1", "kind": "ArtifactGenerator", "name": "gen", "namespace": "ns"}}
	u.Object["status"] = map[string]any{"artifact": map[string]any{"revision": "latest@sha256:abc"}}
	cols := ExternalArtifact.Columns()
	if len(cols) != 1 || cols[0].Header != "Source" || cols[0].Value(u) != "ArtifactGenerator/ns/gen" {
		t.Errorf("columns = %+v", cols)
	}
	if ExternalArtifact.HasSuspended() || !ExternalArtifact.Static(u) || ExternalArtifact.Revision(u) != "latest@sha256:abc" {
		t.Error("an ExternalArtifact has a revision, no SUSPENDED column, and is static")
	}
	for _, k := range Reconcilable {
		if k.Kind == ExternalArtifact.Kind {
			t.Error("ExternalArtifact is not reconcilable")
		}
	}
	if ArtifactGenerator.CommandPath() != "artifact generator" || ExternalArtifact.CommandPath() != "source external" {
		t.Errorf("command paths %q, %q", ArtifactGenerator.CommandPath(), ExternalArtifact.CommandPath())
	}
}
