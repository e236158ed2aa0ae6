package reconcile

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Lookup lists, through c (the manager's cache), the objects whose field
// index holds key, and returns a request for each: the map function of
// every watch that queues the objects referring to the one that changed
// (a source's users, a dependency's dependents, a ConfigMap's readers).
func Lookup(ctx context.Context, c client.Reader, newList func() client.ObjectList, index, key string) []crreconcile.Request {
	list := newList()
	if err := c.List(ctx, list, client.MatchingFields{index: key}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing referrers", "index", index, "key", key)
		return nil
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "reading referrers", "index", index, "key", key)
		return nil
	}
	reqs := make([]crreconcile.Request, 0, len(items))
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			reqs = append(reqs, crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}})
		}
	}
	return reqs
}
