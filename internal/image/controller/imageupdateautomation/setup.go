package imageupdateautomation

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// SetupWithManager registers the reconciler. Besides spec changes and
// reconcile requests, an ImagePolicy whose latest image (or labels)
// changes triggers the automations of its namespace that select it.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, opts reconcile.SetupOptions) error {
	return reconcile.Setup(mgr, &imagev1.ImageUpdateAutomation{}, r, opts, reconcile.Watch{
		Object:     &imagev1.ImagePolicy{},
		Handler:    handler.EnqueueRequestsFromMapFunc(r.automationsFor),
		Predicates: []predicate.Predicate{latestImageChanged{}},
	})
}

// automationsFor maps a policy to the automations of its namespace whose
// policySelector selects it.
func (r *Reconciler) automationsFor(ctx context.Context, o client.Object) []crreconcile.Request {
	var list imagev1.ImageUpdateAutomationList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot list ImageUpdateAutomations for a policy", "namespace", o.GetNamespace())
		return nil
	}
	var out []crreconcile.Request
	for i := range list.Items {
		a := &list.Items[i]
		if sel, err := selector(a); err == nil && sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(a)})
		}
	}
	return out
}

// latestImageChanged passes policies that appear, go, or whose latest
// image, readiness or labels change: what can change what an automation
// writes.
type latestImageChanged struct{ predicate.Funcs }

func (latestImageChanged) Update(e event.UpdateEvent) bool {
	oldP, ok1 := e.ObjectOld.(*imagev1.ImagePolicy)
	newP, ok2 := e.ObjectNew.(*imagev1.ImagePolicy)
	if !ok1 || !ok2 {
		return false
	}
	return !reflect.DeepEqual(oldP.Status.LatestRef, newP.Status.LatestRef) ||
		usable(oldP) != usable(newP) ||
		!reflect.DeepEqual(oldP.GetLabels(), newP.GetLabels())
}
