package ssa

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listGroup is the objects of one kind, API version and namespace.
type listGroup struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// lookup is what the list reads learned of one object: known says they
// answered for it, and obj is then the object, or nil when it is absent.
type lookup struct {
	obj   *unstructured.Unstructured
	known bool
}

// listing is the answer of list, by object.
type listing struct {
	mu      sync.Mutex
	objects map[ObjMetadata]lookup
}

func (l *listing) get(id ObjMetadata) lookup {
	if l == nil {
		return lookup{}
	}
	return l.objects[id]
}

func (l *listing) set(id ObjMetadata, v lookup) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.objects[id] = v
}

// list reads, with one list request per kind and namespace, the objects
// of objs that already carry owner's labels: on a steady-state reconcile
// all of them. Flux reads every object with its own request before its
// dry-run; listing halves the requests of a reconcile that changes
// nothing, and the API server's rate limits make requests the cost that
// counts. When two or more objects of a kind are not among those labelled
// (a first apply, objects added to the build), one more list, of the
// kind's metadata only and without the label selector, tells which of
// them are absent: those need no read before they are created. Kinds with
// a single object are read on their own as before, and a list that fails
// (an identity allowed to get but not to list) only means the objects are
// read one by one.
func (m *Manager) list(ctx context.Context, objs []*unstructured.Unstructured, owner *Owner) *listing {
	if owner == nil {
		return nil
	}
	var groups []listGroup
	members := map[listGroup][]ObjMetadata{}
	for _, obj := range objs {
		key := listGroup{gvk: obj.GroupVersionKind(), namespace: obj.GetNamespace()}
		if _, ok := members[key]; !ok {
			groups = append(groups, key)
		}
		members[key] = append(members[key], ObjMetadataOf(obj))
	}

	out := &listing{objects: map[ObjMetadata]lookup{}}
	_ = forEach(ctx, len(groups), m.concurrency, func(ctx context.Context, i int) error {
		g := groups[i]
		if ids := members[g]; len(ids) >= 2 {
			m.listGroup(ctx, g, ids, owner, out)
		}
		return nil
	})
	return out
}

// listGroup lists the labelled objects of g, then, when at least two of
// ids are not among them, the metadata of all objects of g to learn which
// of those are absent.
func (m *Manager) listGroup(ctx context.Context, g listGroup, ids []ObjMetadata, owner *Owner, out *listing) {
	labelled, err := m.listLabelled(ctx, g, owner)
	if err != nil {
		return
	}
	for id, obj := range labelled {
		out.set(id, lookup{obj: obj, known: true})
	}
	var missing []ObjMetadata
	for _, id := range ids {
		if _, ok := labelled[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) < 2 {
		return
	}
	present, err := m.listNames(ctx, g)
	if err != nil {
		return
	}
	for _, id := range missing {
		if !present[id.Name] {
			out.set(id, lookup{known: true})
		}
	}
}

// listLabelled lists the objects of g that carry owner's labels.
func (m *Manager) listLabelled(ctx context.Context, g listGroup, owner *Owner) (map[ObjMetadata]*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
	if err := m.client.List(ctx, list, client.InNamespace(g.namespace), client.MatchingLabels(owner.Labels())); err != nil {
		return nil, err
	}
	out := make(map[ObjMetadata]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		item := &list.Items[i]
		item.SetGroupVersionKind(g.gvk)
		out[ObjMetadataOf(item)] = item
	}
	return out, nil
}

// listNames lists the metadata of all objects of g and returns their
// names.
func (m *Manager) listNames(ctx context.Context, g listGroup) (map[string]bool, error) {
	meta := &metav1.PartialObjectMetadataList{}
	meta.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
	if err := m.client.List(ctx, meta, client.InNamespace(g.namespace)); err != nil {
		return nil, err
	}
	present := make(map[string]bool, len(meta.Items))
	for i := range meta.Items {
		present[meta.Items[i].Name] = true
	}
	return present, nil
}
