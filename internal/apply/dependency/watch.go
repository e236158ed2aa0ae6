package dependency

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// Index is the field index holding "<namespace>/<name>" of each
// spec.dependsOn entry; IndexKeys computes it.
const Index = ".spec.dependsOn"

// IndexKeys is the index function of Index for any Object.
func IndexKeys(o client.Object) []string {
	obj, ok := o.(Object)
	if !ok {
		return nil
	}
	refs := obj.GetDependsOn()
	keys := make([]string, 0, len(refs))
	for _, ref := range refs {
		keys = append(keys, Key(obj.GetNamespace(), ref).String())
	}
	return keys
}

// Watch returns the watch on the kind's own objects that queues, when one
// is created, deleted or changes readiness, the objects whose dependsOn
// names it (read through Index in c, the manager's cache).
func (k Kind[T]) Watch(c client.Reader) reconcile.Watch {
	return reconcile.Watch{
		Object: k.New(),
		Handler: handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []crreconcile.Request {
			key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
			return reconcile.Lookup(ctx, c, k.NewList, Index, key)
		}),
		Predicates: []predicate.Predicate{changed[T]{kind: k}},
	}
}

// changed passes the events a dependent cares about: creation, deletion,
// and a status change of what the dependent's check reads.
type changed[T Object] struct {
	predicate.Funcs
	kind Kind[T]
}

func (changed[T]) Create(event.CreateEvent) bool   { return true }
func (changed[T]) Delete(event.DeleteEvent) bool   { return true }
func (changed[T]) Generic(event.GenericEvent) bool { return false }
func (p changed[T]) Update(e event.UpdateEvent) bool {
	older, ok1 := e.ObjectOld.(T)
	newer, ok2 := e.ObjectNew.(T)
	if !ok1 || !ok2 {
		return false
	}
	// A dependency that only reports the progress of a run (Ready Unknown
	// while Reconciling) has nothing new for a dependent yet: its result
	// comes with the patch that ends the run.
	return p.kind.readinessOf(older) != p.kind.readinessOf(newer) && !inProgress(newer)
}

// inProgress reports whether obj is in the middle of a reconcile:
// Reconciling True with reason Progressing, as reconcile.Progress leaves it.
func inProgress(obj Object) bool {
	c := apimeta.FindStatusCondition(obj.GetConditions(), meta.ReconcilingCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == meta.ProgressingReason
}

// readiness is what a dependent's check reads from a dependency.
type readiness struct {
	generation, observed int64
	ready                string
	revision             string
}

func (k Kind[T]) readinessOf(obj T) readiness {
	r := readiness{generation: obj.GetGeneration(), observed: k.ObservedGeneration(obj)}
	if k.Revision != nil {
		r.revision = k.Revision(obj)
	}
	if c := apimeta.FindStatusCondition(obj.GetConditions(), meta.ReadyCondition); c != nil {
		r.ready = string(c.Status)
	}
	return r
}
