package ssa

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAppliedDigest(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	later := metav1.NewTime(at.Add(time.Minute))
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub, fields string, when metav1.Time) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "apps/v1", Subresource: sub,
			Time: &when, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	ours := entry("kustomize-controller", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:replicas":{}}}`, at)
	object := func(annotations map[string]string, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetManagedFields(entries)
		u.SetAnnotations(annotations)
		return u
	}
	base := AppliedDigest(object(nil, ours), "kustomize-controller", nil)
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		same bool
	}{
		{"status written by the workload controller",
			object(nil, ours, entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`, later)), true},
		{"revision annotation written by the workload controller",
			object(map[string]string{"deployment.kubernetes.io/revision": "2"}, ours,
				entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{}}`, later)), true},
		{"our entry changed", object(nil, entry("kustomize-controller", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{}}`, at)), false},
		{"our entry applied again later", object(nil, entry("kustomize-controller", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:replicas":{}}}`, later)), false},
		{"kubectl edit", object(nil, ours, entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{}}`, later)), false},
		{"another applier", object(nil, ours, entry("helm", metav1.ManagedFieldsOperationApply, "", `{"f:data":{}}`, later)), false},
		{"override manager", object(nil, ours, entry("my-operator", metav1.ManagedFieldsOperationUpdate, "", `{"f:data":{}}`, later)), false},
		{"last-applied annotation added", object(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}, ours), false},
		{"reconcile disabled", object(map[string]string{"kustomize.toolkit.fluxcd.io/reconcile": "disabled"}, ours), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppliedDigest(tt.obj, "kustomize-controller", []string{"my-operator"})
			if (got == base) != tt.same {
				t.Errorf("digest same = %v, want %v", got == base, tt.same)
			}
		})
	}
	if AppliedDigest(object(nil), "kustomize-controller", nil) != "" {
		t.Error("an object without managed fields has a digest")
	}
}
