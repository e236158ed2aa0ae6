package ssa

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listGroup is the objects of one kind, API version and namespace.
type listGroup struct {
	gvk       schema.GroupVersionKind
	namespace string
	count     int
}

// list reads, with one list request per kind and namespace, the objects
// of objs that already carry owner's labels: on a steady-state reconcile
// all of them. Flux reads every object with its own request before its
// dry-run; listing halves the requests of a reconcile that changes
// nothing, and the API server's rate limits make requests the cost that
// counts. Kinds with a single object are read on their own as before, and
// a list that fails (an identity allowed to get but not to list) only
// means the objects are read one by one.
func (m *Manager) list(ctx context.Context, objs []*unstructured.Unstructured, owner *Owner) map[ObjMetadata]*unstructured.Unstructured {
	if owner == nil {
		return nil
	}
	var groups []listGroup
	index := map[listGroup]int{}
	for _, obj := range objs {
		key := listGroup{gvk: obj.GroupVersionKind(), namespace: obj.GetNamespace()}
		if i, ok := index[key]; ok {
			groups[i].count++
			continue
		}
		index[key] = len(groups)
		key.count = 1
		groups = append(groups, key)
	}

	out := map[ObjMetadata]*unstructured.Unstructured{}
	var mu sync.Mutex
	_ = forEach(ctx, len(groups), m.concurrency, func(ctx context.Context, i int) error {
		g := groups[i]
		if g.count < 2 {
			return nil
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
		if err := m.client.List(ctx, list, client.InNamespace(g.namespace), client.MatchingLabels(owner.Labels())); err != nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range list.Items {
			item := &list.Items[i]
			item.SetGroupVersionKind(g.gvk)
			out[ObjMetadataOf(item)] = item
		}
		return nil
	})
	return out
}
