package bucket

import (
	"fmt"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/artifact"
)

// SetupOptions tunes the controller's work queue.
type SetupOptions struct {
	MaxConcurrentReconciles int
	MinRetryDelay           time.Duration
	MaxRetryDelay           time.Duration
}

// SetupWithManager registers the reconciler. Only spec changes (generation)
// and reconcile requests (annotation) trigger a reconcile; status writes of
// our own do not.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts SetupOptions) error {
	alg, err := artifact.ParseAlgorithm(string(r.DigestAlgorithm))
	if err != nil {
		return fmt.Errorf("bucket controller: %w", err)
	}
	r.DigestAlgorithm = alg
	if r.Now == nil {
		r.Now = time.Now
	}
	if opts.MinRetryDelay == 0 {
		opts.MinRetryDelay = 750 * time.Millisecond
	}
	if opts.MaxRetryDelay == 0 {
		opts.MaxRetryDelay = 15 * time.Minute
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&sourcev1.Bucket{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}),
		)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(opts.MaxConcurrentReconciles, 1),
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
				opts.MinRetryDelay, opts.MaxRetryDelay),
		}).
		Complete(r)
}
