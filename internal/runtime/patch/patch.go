// Package patch writes back what a reconcile changed, and only that. A
// Helper snapshots the object when the reconcile starts; Patch at the end
// sends a merge patch of metadata/spec changes (finalizers) and a separate
// merge patch of the status subresource, each computed against the snapshot.
// Conflicts cannot clobber a concurrent writer's unrelated fields.
package patch

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
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

// Patch sends what changed since the snapshot. One JSON merge patch is
// computed from the object as the reconcile left it, before anything is
// sent; it goes to the object (the API server keeps metadata and spec from
// it) and, when the status changed, to the status subresource (which keeps
// only the status). Computing it first matters: each reply overwrites obj
// with the stored state. A NotFound is ignored: the object is gone.
//
// An object equal to the snapshot sends nothing without computing the
// patch: most reconciles of a fleet at rest change nothing, and encoding
// both objects to diff them was a quarter of such a reconcile's CPU.
// reflect.DeepEqual (not equality.Semantic, which holds a nil slice equal
// to an empty one that encodes differently) is equal only when the
// encodings are. It compares field by field (differing), and only the
// fields that differ are encoded to compute the patch.
func (h *Helper) Patch(ctx context.Context, obj client.Object) error {
	sent, err := h.send(ctx, obj)
	if err != nil || !sent {
		return err
	}
	// Each reply carries the object's managedFields, which nothing reads
	// (the manager's caches strip them too): dropped, so that the next
	// patch of this reconcile (a progress message) does not marshal and
	// diff them twice — most of a Kustomization's bytes after a status
	// write. A merge patch of two objects without them never mentions them.
	obj.SetManagedFields(nil)
	h.before = obj.DeepCopyObject().(client.Object)
	return nil
}

// PatchCopy is Patch for snapshot, a copy of the reconcile's object that
// another goroutine writes while the reconcile goes on changing the object
// itself (a progress phase written late by a timer,
// docs/design/0043-coalesced-progress-writes.md). The base of the next
// Patch becomes snapshot as it was sent, not the reply: the reconcile's
// object still carries the metadata and spec it was read with, and a base
// taken from the reply would make its next Patch send them back — a
// resourceVersion older than the stored one, which the API server refuses
// as a conflict, or a spec edited meanwhile, which it would revert. The
// base takes the reply's resourceVersion alone, and PatchCopy returns it
// (empty when nothing was sent) for the caller to set on its object
// before its next Patch, once the two goroutines are ordered again; the
// base and the object then differ in what the reconcile changed since the
// snapshot, and nothing else.
func (h *Helper) PatchCopy(ctx context.Context, snapshot client.Object) (string, error) {
	base := snapshot.DeepCopyObject().(client.Object)
	sent, err := h.send(ctx, snapshot)
	if err != nil || !sent {
		return "", err
	}
	base.SetResourceVersion(snapshot.GetResourceVersion())
	h.before = base
	return snapshot.GetResourceVersion(), nil
}

// send is Patch without the new base: it reports whether the API server
// took a patch (obj then holds its reply).
func (h *Helper) send(ctx context.Context, obj client.Object) (bool, error) {
	before, after, changed := differing(h.before, obj)
	if !changed {
		return false, nil
	}
	data, err := client.MergeFrom(before).Data(after)
	if err != nil {
		return false, fmt.Errorf("computing patch of %s: %w", obj.GetName(), err)
	}
	statusChanged, objectChanged, err := changes(data)
	if err != nil {
		return false, fmt.Errorf("reading patch of %s: %w", obj.GetName(), err)
	}
	if !statusChanged && !objectChanged {
		return false, nil
	}
	raw := client.RawPatch(types.MergePatchType, data)
	// Each reply overwrites obj with the stored object, whose generation
	// is a spec edit's that landed during the reconcile, if one did. The
	// reconcile worked from the spec of the generation it began with, and
	// status.observedGeneration and the conditions' must say that one: the
	// edit's own reconcile, already queued, reports its generation.
	generation := obj.GetGeneration()
	defer obj.SetGeneration(generation)
	if objectChanged {
		if err := h.client.Patch(ctx, obj, raw); err != nil {
			return false, ignoreNotFound(fmt.Errorf("patching %s: %w", obj.GetName(), err))
		}
	}
	if statusChanged {
		if err := h.client.Status().Patch(ctx, obj, raw); err != nil {
			return false, ignoreNotFound(fmt.Errorf("patching status of %s: %w", obj.GetName(), err))
		}
	}
	return true, nil
}

// differing returns copies of before and after that keep only the fields
// that differ, the others zero in both, and whether any differs. Their
// merge patch is the merge patch of the whole objects byte for byte: a
// field equal in both encodes the same in both (a zero one too), so it
// contributes no key either way; a struct field that differs is split the
// same way, one level down, since a merge patch diffs nested objects key
// by key. Only what changed is marshalled and diffed then: a progress
// patch encodes the conditions of both objects, not metadata, spec,
// inventory and history too. The copies are shallow: they share what they
// keep with the objects. Objects that cannot be split (splittable) are
// returned as they are.
func differing(before, after client.Object) (b, a client.Object, changed bool) {
	bv, av := reflect.ValueOf(before), reflect.ValueOf(after)
	if bv.Type() != av.Type() || bv.Kind() != reflect.Pointer || bv.IsNil() || av.IsNil() || !splittable(bv.Elem().Type()) {
		return before, after, !reflect.DeepEqual(before, after)
	}
	nb, na := reflect.New(bv.Elem().Type()), reflect.New(bv.Elem().Type())
	changed = keepDiffering(nb.Elem(), na.Elem(), bv.Elem(), av.Elem())
	return nb.Interface().(client.Object), na.Interface().(client.Object), changed
}

// keepDiffering sets in nb and na, zero structs of b's type, the fields of
// b and a that differ, splitting those it can, and reports whether any
// does. b and a are addressable: fields are compared through pointers to
// them, not copied to be compared, and each is compared once (a split
// field by its own fields).
func keepDiffering(nb, na, b, a reflect.Value) bool {
	changed := false
	t := b.Type()
	for i := range t.NumField() {
		bf, af := b.Field(i), a.Field(i)
		if splittable(bf.Type()) && !strings.Contains(t.Field(i).Tag.Get("json"), "omitzero") {
			changed = keepDiffering(nb.Field(i), na.Field(i), bf, af) || changed
			continue
		}
		if reflect.DeepEqual(bf.Addr().Interface(), af.Addr().Interface()) {
			continue
		}
		changed = true
		nb.Field(i).Set(bf)
		na.Field(i).Set(af)
	}
	return changed
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// splittable reports whether t is a struct that encoding/json encodes
// field by field, as an object with a key per field: a struct of exported
// fields only, without a marshaller of its own (metav1.Time,
// intstr.IntOrString and unstructured.Unstructured have one). A field
// tagged omitzero is not split (keepDiffering): zeroing its equal fields
// could drop the whole field from one side only.
func splittable(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	if v, ok := splittableTypes.Load(t); ok {
		return v.(bool)
	}
	ok := encodesByField(t)
	splittableTypes.Store(t, ok)
	return ok
}

// splittableTypes remembers splittable's answer by type.
var splittableTypes sync.Map

// encodesByField is splittable's answer for the struct type t.
func encodesByField(t reflect.Type) bool {
	for _, m := range []reflect.Type{jsonMarshaler, textMarshaler} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return false
		}
	}
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			return false
		}
	}
	return true
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// changes reads a merge patch: whether it changes the status, and whether
// it changes anything else. A change of resourceVersion or managedFields
// alone (the server's, never the reconcile's) is none. Reading the patch
// costs one small decode; comparing the objects field by field cost two
// conversions to maps of each, the largest CPU share of a status write.
func changes(patch []byte) (status, object bool, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(patch, &top); err != nil {
		return false, false, err
	}
	_, status = top["status"]
	delete(top, "status")
	if md, ok := top["metadata"]; ok {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(md, &fields); err != nil {
			return false, false, err
		}
		delete(fields, "resourceVersion")
		delete(fields, "managedFields")
		if len(fields) == 0 {
			delete(top, "metadata")
		}
	}
	return status, len(top) > 0, nil
}
