package ssa

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func fields(raw string) *metav1.FieldsV1 { return metav1.NewFieldsV1(raw) }

func entry(manager string, op metav1.ManagedFieldsOperationType, raw string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: fields(raw)}
}

const (
	apply  = metav1.ManagedFieldsOperationApply
	update = metav1.ManagedFieldsOperationUpdate
)

func TestTakeOver(t *testing.T) {
	from := takeoverFrom("kustomize-controller", []string{"helm"})
	status := entry("kubectl-client-side-apply", update, `{"f:status":{}}`)
	status.Subresource = "status"
	for _, tc := range []struct {
		name    string
		in      []metav1.ManagedFieldsEntry
		want    []metav1.ManagedFieldsEntry
		changed bool
	}{
		{
			name: "nothing to take",
			in: []metav1.ManagedFieldsEntry{
				entry("kustomize-controller", apply, `{"f:data":{"f:a":{}}}`),
				entry("flux-client-side-apply", update, `{"f:data":{"f:b":{}}}`),
				entry("kube-controller-manager", update, `{"f:status":{}}`),
				status,
			},
		},
		{
			name: "first match renamed",
			in: []metav1.ManagedFieldsEntry{
				entry("kubectl-client-side-apply", update, `{"f:data":{"f:a":{}}}`),
				entry("kube-controller-manager", update, `{"f:status":{}}`),
			},
			want: []metav1.ManagedFieldsEntry{
				entry("kube-controller-manager", update, `{"f:status":{}}`),
				entry("kustomize-controller", apply, `{"f:data":{"f:a":{}}}`),
			},
			changed: true,
		},
		{
			name: "merged into the apply entry",
			in: []metav1.ManagedFieldsEntry{
				entry("kustomize-controller", apply, `{"f:data":{"f:a":{}}}`),
				entry("kubectl", apply, `{"f:data":{"f:b":{}}}`),
				entry("before-first-apply", update, `{"f:data":{"f:c":{}}}`),
				entry("kustomize-controller", update, `{"f:metadata":{"f:labels":{"f:x":{}}}}`),
				entry("helm", update, `{"f:data":{"f:d":{}}}`),
				entry("kubectl-edit", apply, `{"f:data":{"f:e":{}}}`),
			},
			want: []metav1.ManagedFieldsEntry{
				entry("kustomize-controller", apply, `{"f:data":{"f:a":{},"f:b":{},"f:c":{},"f:d":{},"f:e":{}},"f:metadata":{"f:labels":{"f:x":{}}}}`),
			},
			changed: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := takeOver(tc.in, "kustomize-controller", from)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			if !changed {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanupPatch(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetResourceVersion("42")
	if patch, err := cleanupPatch(obj, "kustomize-controller", nil); err != nil || patch != nil {
		t.Errorf("clean object: patch %s, err %v", patch, err)
	}

	obj.SetAnnotations(map[string]string{
		"kubectl.kubernetes.io/last-applied-configuration": "{}",
		"fluxcd.io/sync-checksum":                          "abc",
		"keep":                                             "me",
	})
	obj.SetLabels(map[string]string{"fluxcd.io/sync-gc-mark": "x", "app": "web"})
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", update, `{"f:data":{}}`)})
	patch, err := cleanupPatch(obj, "kustomize-controller", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		got = append(got, op["op"].(string)+" "+op["path"].(string))
	}
	want := []string{
		"test /metadata/resourceVersion",
		"replace /metadata/managedFields",
		"remove /metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
		"remove /metadata/annotations/fluxcd.io~1sync-checksum",
		"remove /metadata/labels/fluxcd.io~1sync-gc-mark",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch ops (-want +got):\n%s", diff)
	}
	if ops[0]["value"] != "42" {
		t.Errorf("test op value %v, want the resourceVersion 42", ops[0]["value"])
	}
}
