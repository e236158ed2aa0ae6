package patch

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

func TestChanges(t *testing.T) {
	tests := []struct {
		patch          string
		status, object bool
	}{
		{`{}`, false, false},
		{`{"status":{"conditions":[{"type":"Ready"}]}}`, true, false},
		{`{"metadata":{"finalizers":["finalizers.fluxcd.io"]}}`, false, true},
		{`{"metadata":{"resourceVersion":"12"}}`, false, false},
		{`{"metadata":{"resourceVersion":"12","managedFields":null},"status":{"x":1}}`, true, false},
		{`{"metadata":{"labels":{"a":"b"}},"status":{"x":1}}`, true, true},
		{`{"spec":{"suspend":true}}`, false, true},
	}
	for _, tt := range tests {
		status, object, err := changes([]byte(tt.patch))
		if err != nil || status != tt.status || object != tt.object {
			t.Errorf("changes(%s) = %v, %v, %v; want %v, %v", tt.patch, status, object, err, tt.status, tt.object)
		}
	}
	if _, _, err := changes([]byte(`[`)); err == nil {
		t.Error("a patch that does not parse is no error")
	}
}

// TestPatchDropsManagedFields: the API server answers each patch with the
// object's managedFields (the interceptor adds them as it would); Patch
// drops them from the object, so the next patch of the same reconcile
// neither marshals nor diffs them, and does not mention them.
func TestPatchDropsManagedFields(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	var sent []string
	c := fake.NewClientBuilder().WithObjects(pod.DeepCopy()).WithStatusSubresource(&corev1.Pod{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				data, err := p.Data(obj)
				if err != nil {
					return err
				}
				sent = append(sent, string(data))
				if err := c.SubResource(sub).Patch(ctx, obj, p, opts...); err != nil {
					return err
				}
				obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "controller", Operation: metav1.ManagedFieldsOperationUpdate,
					Subresource: "status", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:message":{}}}`)}})
				return nil
			},
		}).Build()
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	h := NewHelper(pod, c)
	for _, msg := range []string{"Fetching manifests", "Building manifests"} {
		pod.Status.Message = msg
		if err := h.Patch(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if mf := pod.GetManagedFields(); mf != nil {
			t.Errorf("after %q: managedFields %v kept", msg, mf)
		}
	}
	if len(sent) != 2 || strings.Contains(sent[1], "managedFields") {
		t.Errorf("status patches sent: %q, want two without managedFields", sent)
	}
}

// TestDifferingPatchIsTheWholePatch: the merge patch of the copies
// differing returns is, byte for byte, the merge patch of the whole
// objects, for each kind of change a reconcile makes.
func TestDifferingPatchIsTheWholePatch(t *testing.T) {
	base := func() *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{
			TypeMeta: metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: "Kustomization"},
			ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "ns", ResourceVersion: "7", Generation: 2,
				Annotations: map[string]string{"a": "1"}, Finalizers: []string{"x"}},
			Spec: kustomizev1.KustomizationSpec{Path: "./apps", Prune: true},
			Status: kustomizev1.KustomizationStatus{LastAppliedRevision: "main@sha1:1",
				Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded",
					LastTransitionTime: metav1.Unix(1700000000, 0)}},
				Inventory: &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{}}},
		}
	}
	tests := []struct {
		name    string
		change  func(*kustomizev1.Kustomization)
		changed bool
	}{
		{"unchanged", func(*kustomizev1.Kustomization) {}, false},
		{"status", func(k *kustomizev1.Kustomization) { k.Status.LastAppliedRevision = "main@sha1:2" }, true},
		{"condition", func(k *kustomizev1.Kustomization) {
			k.Status.Conditions[0].Message = "Building manifests <for> & such"
		}, true},
		{"nil for empty", func(k *kustomizev1.Kustomization) { k.Status.Inventory.Entries = nil }, true},
		{"finalizer", func(k *kustomizev1.Kustomization) { k.Finalizers = append(k.Finalizers, "finalizers.fluxcd.io") }, true},
		{"finalizer and status", func(k *kustomizev1.Kustomization) {
			k.Finalizers = nil
			k.Status.ObservedGeneration = 2
		}, true},
		{"annotation removed", func(k *kustomizev1.Kustomization) { k.Annotations = nil }, true},
		{"resourceVersion", func(k *kustomizev1.Kustomization) { k.ResourceVersion = "8" }, true},
		{"type meta", func(k *kustomizev1.Kustomization) { k.TypeMeta = metav1.TypeMeta{} }, true},
		{"spec", func(k *kustomizev1.Kustomization) { k.Spec.Suspend = true }, true},
		{"spec field emptied", func(k *kustomizev1.Kustomization) { k.Spec.Path = "" }, true},
		{"resourceVersion and status", func(k *kustomizev1.Kustomization) {
			k.ResourceVersion = "9"
			k.Status.Conditions = append(k.Status.Conditions, metav1.Condition{Type: "Reconciling", Status: metav1.ConditionTrue})
		}, true},
		{"inventory", func(k *kustomizev1.Kustomization) {
			k.Status.Inventory.Entries = append(k.Status.Inventory.Entries, kustomizev1.ResourceRef{ID: "ns_a__ConfigMap", Version: "v1"})
		}, true},
		{"inventory removed", func(k *kustomizev1.Kustomization) { k.Status.Inventory = nil }, true},
		{"inline status field", func(k *kustomizev1.Kustomization) { k.Status.LastHandledReconcileAt = "now" }, true},
		{"transition time", func(k *kustomizev1.Kustomization) {
			k.Status.Conditions[0].LastTransitionTime = metav1.Unix(1700000001, 0)
		}, true},
		{"equal encodings", func(k *kustomizev1.Kustomization) {
			k.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Unix(1700000000, 5))
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, after := base(), base()
			tt.change(after)
			if changed := assertSamePatch(t, before, after); changed != tt.changed {
				t.Errorf("changed = %v, want %v", changed, tt.changed)
			}
			if !reflect.DeepEqual(after, func() *kustomizev1.Kustomization { k := base(); tt.change(k); return k }()) {
				t.Error("differing changed the object")
			}
		})
	}
}

// assertSamePatch fails t unless the merge patch of the copies differing
// returns is the merge patch of before and after; it returns differing's
// changed.
func assertSamePatch(t *testing.T, before, after client.Object) bool {
	t.Helper()
	want, err := client.MergeFrom(before).Data(after)
	if err != nil {
		t.Fatal(err)
	}
	b, a, changed := differing(before, after)
	got, err := client.MergeFrom(b).Data(a)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("patch = %s\nwant  %s", got, want)
	}
	return changed
}

// TestDifferingOfUnstructured: an unstructured object is one field (its
// map): it is compared and patched whole.
func TestDifferingOfUnstructured(t *testing.T) {
	before := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"x": int64(1)}}}
	after := before.DeepCopy()
	if _, _, changed := differing(before, after); changed {
		t.Error("equal unstructured objects differ")
	}
	after.Object["status"] = map[string]any{"x": int64(2)}
	b, a, changed := differing(before, after)
	if !changed {
		t.Fatal("a changed unstructured object is unchanged")
	}
	got, err := client.MergeFrom(b).Data(a)
	if err != nil || string(got) != `{"status":{"x":2}}` {
		t.Errorf("patch = %s, %v", got, err)
	}
}

// splitSpec has fields differing must not split: one with a marshaller of
// its own, one tagged omitzero.
type splitSpec struct {
	Port   intstr.IntOrString `json:"port"`
	Limits struct {
		CPU    string `json:"cpu,omitempty"`
		Memory string `json:"memory,omitempty"`
	} `json:"limits,omitzero"`
	Nested struct {
		A string `json:"a,omitempty"`
		B int    `json:"b"`
	} `json:"nested"`
}

type splitObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              splitSpec `json:"spec"`
}

func (o *splitObject) DeepCopyObject() runtime.Object { c := *o; return &c }

// TestDifferingDoesNotSplitWhatEncodesAsAWhole: a field with a marshaller
// of its own and an omitzero field are kept whole when they differ; the
// patch is still the whole objects' patch.
func TestDifferingDoesNotSplitWhatEncodesAsAWhole(t *testing.T) {
	base := func() *splitObject {
		o := &splitObject{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
		o.Spec.Port = intstr.FromString("http")
		o.Spec.Limits.CPU, o.Spec.Limits.Memory = "1", "1Gi"
		o.Spec.Nested.A, o.Spec.Nested.B = "x", 1
		return o
	}
	tests := []struct {
		name   string
		change func(*splitObject)
	}{
		{"port kind", func(o *splitObject) { o.Spec.Port = intstr.FromInt32(8080) }},
		{"port name", func(o *splitObject) { o.Spec.Port = intstr.FromString("https") }},
		{"omitzero emptied", func(o *splitObject) { o.Spec.Limits.CPU, o.Spec.Limits.Memory = "", "" }},
		{"omitzero one field", func(o *splitObject) { o.Spec.Limits.Memory = "" }},
		{"nested one field", func(o *splitObject) { o.Spec.Nested.A = "" }},
		{"nested other field", func(o *splitObject) { o.Spec.Nested.B = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, after := base(), base()
			tt.change(after)
			if !assertSamePatch(t, before, after) {
				t.Error("changed = false, want true")
			}
		})
	}
}
