package patch

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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
