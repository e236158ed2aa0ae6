package ssa

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func withMeta(annotations, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAnnotations(annotations)
	u.SetLabels(labels)
	return u
}

func TestSkip(t *testing.T) {
	plain := withMeta(nil, nil)
	for _, tc := range []struct {
		name              string
		desired, existing *unstructured.Unstructured
		want              bool
	}{
		{"plain, absent", plain, nil, false},
		{"plain, present", plain, plain, false},
		{"Ignore in manifest", withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "Ignore"}, nil), nil, true},
		{"ignore in cluster, lower case", plain, withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "ignore"}, nil), true},
		{"reconcile disabled as a label", plain, withMeta(nil, map[string]string{"kustomize.toolkit.fluxcd.io/reconcile": "disabled"}), true},
		{"reconcile Disabled in manifest", withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/reconcile": "Disabled"}, nil), nil, true},
		{"IfNotPresent, absent", withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}, nil), nil, false},
		{"IfNotPresent, present", withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}, nil), plain, true},
		{"IfNotPresent only in cluster", plain, withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}, nil), false},
	} {
		if got := skip(tc.desired, tc.existing); got != tc.want {
			t.Errorf("%s: skip = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestForcedAndMerged(t *testing.T) {
	force := withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/force": "enabled"}, nil)
	plain := withMeta(nil, nil)
	if forced(plain, plain, ApplyOptions{}) {
		t.Error("forced without force")
	}
	if !forced(plain, plain, ApplyOptions{Force: true}) || !forced(force, plain, ApplyOptions{}) || !forced(plain, force, ApplyOptions{}) {
		t.Error("not forced with spec.force or the annotation")
	}
	merge := withMeta(map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "Merge"}, nil)
	if merged(plain, plain) || !merged(merge, plain) || !merged(plain, merge) {
		t.Error("merged wrong")
	}
}

func TestDrifted(t *testing.T) {
	stored := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "resourceVersion": "1", "managedFields": []any{"x"}},
		"data":     map[string]any{"k": "v"},
	}}
	same := stored.DeepCopy()
	same.SetResourceVersion("2")
	same.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kustomize-controller"}})
	if drifted(stored, same) {
		t.Error("resourceVersion and managedFields count as drift")
	}
	changed := stored.DeepCopy()
	changed.Object["data"] = map[string]any{"k": "w"}
	if !drifted(stored, changed) {
		t.Error("changed data is not drift")
	}
	labelled := stored.DeepCopy()
	labelled.SetLabels(map[string]string{"a": "b"})
	if !drifted(stored, labelled) {
		t.Error("a new label is not drift")
	}
	if md := stored.Object["metadata"].(map[string]any); md["resourceVersion"] != "1" || md["managedFields"] == nil {
		t.Error("drifted changed its arguments")
	}
}

func invalid(kind, name string, causes ...*field.Error) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: kind}, name, causes)
}

func TestIsImmutable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"Job template", invalid("Job", "j", field.Invalid(field.NewPath("spec", "template"), "...", "field is immutable")), true},
		{"Service clusterIP", invalid("Service", "s", field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), []string{"10.0.0.2"}, "may not change once set")), true},
		{"StatefulSet spec", invalid("StatefulSet", "s", field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")), true},
		{"CEL rule", invalid("Widget", "w", field.Invalid(field.NewPath("spec", "size"), 3, "Value is immutable")), true},
		{"webhook", apierrors.NewForbidden(schema.GroupResource{Resource: "widgets"}, "w", errors.New(`admission webhook "v.example.com" denied the request: spec.size is an immutable field`)), true},
		{"plain validation error", invalid("Service", "s", field.Invalid(field.NewPath("spec", "ports").Index(0).Child("port"), 700000, "must be between 1 and 65535, inclusive")), false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "jobs"}, "j", errors.New("the object has been modified")), false},
		{"not an API error", fmt.Errorf("field is immutable"), false},
	} {
		if got := isImmutable(tc.err); got != tc.want {
			t.Errorf("%s: isImmutable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestImmutableFieldError(t *testing.T) {
	err := invalid("Job", "migrate",
		field.Invalid(field.NewPath("spec", "template"), "...", "field is immutable"),
		field.Invalid(field.NewPath("spec", "selector"), "...", "field is immutable"),
		field.Required(field.NewPath("spec", "other"), ""))
	e := newImmutableFieldError(id("batch", "Job", "default", "migrate"), fmt.Errorf("wrapped: %w", err))
	want := `Job/default/migrate dry-run failed: immutable field spec.template, spec.selector changed, which needs the object recreated (enable spec.force or annotate it kustomize.toolkit.fluxcd.io/force: Enabled): wrapped: `
	if got := e.Error(); got[:len(want)] != want {
		t.Errorf("Error() = %q, want it to start with %q", got, want)
	}
	if !apierrors.IsInvalid(e) {
		t.Error("the API error is not unwrapped")
	}
}
