package parked

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// writtenBy returns the objects cs created or changed, and which.
func writtenBy(cs *ssa.ChangeSet) map[ssa.ObjMetadata]ssa.Action {
	out := map[ssa.ObjMetadata]ssa.Action{}
	if cs == nil {
		return out
	}
	for _, e := range cs.Entries {
		if e.Action == ssa.Created || e.Action == ssa.Configured {
			out[e.ObjMetadata] = e.Action
		}
	}
	return out
}

// writtenReader reads through its Reader (the watch cache, for the kinds
// watched) the objects a wait's apply did not write. A cache an instant
// behind the write would show an object before the change, healthy in its
// old generation, so the objects it wrote are judged by the API server's
// answer to the apply (answers, in the reconcile that applied them) or
// read from the API server (kube):
//   - the first look, before the watches follow the wait, reads the
//     answers: nothing fresher exists, and a read would cost a request
//     per object;
//   - the look once the watches follow it (settled) reads the cache, and
//     takes its copy when it is the write or later (same uid, and the same
//     resourceVersion or a later generation; for an object the apply
//     created, any copy of that uid). When the cache has not seen a
//     created object yet, the answer stands: the event of the creation is
//     still to come and queues the wait. Anything else is read;
//   - later looks (after a watch event, or polling the kinds not watched)
//     read them from the API server.
type writtenReader struct {
	client.Reader
	kube     client.Reader
	written  map[ssa.ObjMetadata]ssa.Action
	uncached func(schema.GroupKind) bool
	answers  func(ssa.ObjMetadata) *unstructured.Unstructured // ChangeSet.Written
	settled  bool
}

func (u *writtenReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	id := ssa.ObjMetadata{GroupKind: gvk.GroupKind(), Namespace: key.Namespace, Name: key.Name}
	action, written := u.written[id]
	if !written {
		return u.Reader.Get(ctx, key, obj, opts...)
	}
	answer := u.answers(id)
	out, isUnstructured := obj.(*unstructured.Unstructured)
	if answer == nil || !isUnstructured || answer.GroupVersionKind() != gvk {
		return u.kube.Get(ctx, key, obj, opts...)
	}
	if !u.settled {
		out.Object = answer.DeepCopy().Object
		return nil
	}
	if u.uncached(gvk.GroupKind()) {
		return u.kube.Get(ctx, key, obj, opts...)
	}
	switch err := u.Reader.Get(ctx, key, obj, opts...); {
	case err == nil && atOrAfter(out, answer, action):
		return nil
	case action == ssa.Created && (apierrors.IsNotFound(err) || err == nil && out.GetUID() != answer.GetUID()):
		out.Object = answer.DeepCopy().Object
		return nil
	}
	out.Object = nil
	out.SetGroupVersionKind(gvk)
	return u.kube.Get(ctx, key, obj, opts...)
}

// atOrAfter reports whether cached is the object an apply answered with
// answer, or a later state of it.
func atOrAfter(cached, answer *unstructured.Unstructured, action ssa.Action) bool {
	if cached.GetUID() != answer.GetUID() {
		return false
	}
	return action == ssa.Created || cached.GetResourceVersion() == answer.GetResourceVersion() ||
		cached.GetGeneration() > answer.GetGeneration()
}
