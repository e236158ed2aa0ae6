package helmrepository

import (
	ctrl "sigs.k8s.io/controller-runtime"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// SetupWithManager registers the reconciler. Only spec changes (generation)
// and reconcile requests (annotation) trigger a reconcile; status writes of
// our own do not.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts reconcile.SetupOptions) error {
	return reconcile.Setup(mgr, &sourcev1.HelmRepository{}, r, opts)
}
