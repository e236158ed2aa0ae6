package imagerepository

import (
	ctrl "sigs.k8s.io/controller-runtime"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// SetupWithManager registers the reconciler: spec changes and reconcile
// requests trigger it, and each reconcile requeues itself for the next
// scan.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts reconcile.SetupOptions) error {
	return reconcile.Setup(mgr, &imagev1.ImageRepository{}, r, opts)
}
