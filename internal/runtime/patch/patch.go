// Package patch writes back what a reconcile changed, and only that. A
// Helper snapshots the object when the reconcile starts; Patch at the end
// sends a merge patch of metadata/spec changes (finalizers) and a separate
// merge patch of the status subresource, each computed against the snapshot.
// Conflicts cannot clobber a concurrent writer's unrelated fields.
package patch

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Helper patches one object.
type Helper struct {
	client client.Client
	before client.Object
}

// NewHelper snapshots obj.
func NewHelper(obj client.Object, c client.Client) *Helper {
	return &Helper{client: c, before: obj.DeepCopyObject().(client.Object)}
}

// Patch sends what changed since the snapshot: first the status
// subresource, then the object itself (metadata such as finalizers). The
// status goes first so that the second reply, which carries the stored
// status, leaves obj holding exactly what this reconcile computed. A
// NotFound is ignored: the object is gone, there is nothing to record.
func (h *Helper) Patch(ctx context.Context, obj client.Object) error {
	if !equality.Semantic.DeepEqual(statusOf(h.before), statusOf(obj)) {
		if err := h.client.Status().Patch(ctx, obj, client.MergeFrom(h.before)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("patching status of %s: %w", obj.GetName(), err)
		}
	}
	if !equality.Semantic.DeepEqual(withoutStatus(h.before), withoutStatus(obj)) {
		if err := h.client.Patch(ctx, obj, client.MergeFrom(h.before)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("patching %s: %w", obj.GetName(), err)
		}
	}
	h.before = obj.DeepCopyObject().(client.Object)
	return nil
}

func withoutStatus(obj client.Object) map[string]any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	delete(u, "status")
	if md, ok := u["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		delete(md, "managedFields")
	}
	return u
}

func statusOf(obj client.Object) any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	return u["status"]
}
