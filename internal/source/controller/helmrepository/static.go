package helmrepository

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/patch"
)

// reconcileStatic handles an OCI HelmRepository as Flux does since v1: a
// data container for HelmCharts, without finalizer, artifact or status. An
// object that was of type default before loses its artifacts, finalizer and
// status here, unless it is suspended (Flux leaves those alone until they
// resume or go).
func (r *Reconciler) reconcileStatic(ctx context.Context, obj *sourcev1.HelmRepository) error {
	if obj.Spec.Suspend && obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	helper := patch.NewHelper(obj, r.Client)
	if controllerutil.ContainsFinalizer(obj, meta.Finalizer) || obj.Status.Artifact != nil || !obj.GetDeletionTimestamp().IsZero() {
		if err := r.removeArtifacts(obj); err != nil {
			return err
		}
		controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	}
	if obj.GetDeletionTimestamp().IsZero() {
		applyStaticStatus(obj)
	}
	return helper.Patch(ctx, obj)
}

// applyStaticStatus empties the status of an OCI HelmRepository, as Flux
// does: its provider's login happens when a HelmChart pulls from it
// (internal/source/helmrepo), and fails there.
func applyStaticStatus(obj *sourcev1.HelmRepository) {
	obj.Status = sourcev1.HelmRepositoryStatus{}
}
