package reconcile

import (
	"fmt"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// SetupOptions tunes a controller's work queue (--concurrent,
// --min-retry-delay, --max-retry-delay).
type SetupOptions struct {
	MaxConcurrentReconciles int
	MinRetryDelay           time.Duration
	MaxRetryDelay           time.Duration
	// Shard, when set (--shard-mode=auto), stands at the head of the
	// reconciler and adds the requeues of the objects a hand-over brings.
	Shard Sharder
}

// Sharder wraps a controller's reconciler of kind (obj an empty object of
// it) so it reconciles only the objects this replica owns
// (internal/runtime/shard.Member). It returns the gated reconciler, the
// source of the requeues hand-overs bring, and a handler that watches
// kind to know which objects exist (it enqueues nothing).
type Sharder interface {
	Gate(kind string, obj client.Object, r crreconcile.Reconciler) (crreconcile.Reconciler, source.Source, handler.EventHandler)
}

// Watch is a further source of reconcile requests: changes to objects of
// some kind, mapped by Handler to the objects to reconcile. Source, when
// set, replaces the other fields: a source of its own, such as a watch
// through a cache other than the manager's.
type Watch struct {
	Object     client.Object
	Handler    handler.EventHandler
	Predicates []predicate.Predicate
	Source     source.Source
}

// Setup registers r for kind obj. Only spec changes (generation) and
// reconcile requests (annotations) trigger a reconcile; the controller's own
// status writes do not. watches add other triggers, such as a source's new
// artifact or a dependency becoming ready.
func Setup(mgr ctrl.Manager, obj client.Object, r crreconcile.Reconciler, opts SetupOptions, watches ...Watch) error {
	if opts.MinRetryDelay == 0 {
		opts.MinRetryDelay = 750 * time.Millisecond
	}
	if opts.MaxRetryDelay == 0 {
		opts.MaxRetryDelay = 15 * time.Minute
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(obj, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}),
		))
	if opts.Shard != nil {
		var handOvers source.Source
		var objects handler.EventHandler
		r, handOvers, objects = opts.Shard.Gate(fmt.Sprintf("%T", obj), obj, r)
		b = b.WatchesRawSource(handOvers).Watches(obj, objects)
	}
	for _, w := range watches {
		if w.Source != nil {
			b = b.WatchesRawSource(w.Source)
			continue
		}
		b = b.Watches(w.Object, w.Handler, builder.WithPredicates(w.Predicates...))
	}
	return b.
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(opts.MaxConcurrentReconciles, 1),
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[crreconcile.Request](
				opts.MinRetryDelay, opts.MaxRetryDelay),
		}).
		Complete(r)
}
