package helmrelease

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/helm/release"
)

// finalize uninstalls the release as spec.uninstall says (keepHistory
// keeps the storage records, marked uninstalled), deletes the HelmChart
// made from spec.chart, then releases the finalizer. A suspended HelmRelease, one whose release is already
// gone, or one whose service account or kubeConfig Secret is gone (identityGone), is let go without
// touching the cluster.
func (r *Reconciler) finalize(ctx context.Context, obj *helmv2.HelmRelease) error {
	r.unpark(client.ObjectKeyFromObject(obj))
	if !obj.Spec.Suspend && !r.identityGone(ctx, obj) {
		if err := r.uninstall(ctx, obj); err != nil {
			r.Events.Warning(ctx, obj, helmv2.UninstallFailedReason, nil, "%s", err)
			return err
		}
	}
	if err := r.deleteHelmChart(ctx, obj); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	return nil
}

func (r *Reconciler) uninstall(ctx context.Context, obj *helmv2.HelmRelease) error {
	helm, err := r.helmClient(ctx, obj)
	if err != nil {
		return fmt.Errorf("could not create Helm client: %w", err)
	}
	return r.uninstallWith(ctx, obj, helm)
}

// uninstallWith uninstalls the release helm acts on, unlocking it first
// when a dead action left it pending; a release already gone is no error.
func (r *Reconciler) uninstallWith(ctx context.Context, obj *helmv2.HelmRelease, helm *release.Client) error {
	latest, err := helm.Observe()
	if err != nil || latest == nil {
		return err
	}
	if latest.Pending() {
		// A dead action's lock would make the uninstall refuse; nothing
		// will finish it now.
		if _, err := helm.Unlock(); err != nil {
			return err
		}
	}
	if err := helm.Uninstall(ctx, obj); err != nil {
		return fmt.Errorf("Helm uninstall failed for release %s with chart %s: %w", latest.FullName(), latest.VersionedChart(), err) //nolint:staticcheck // Flux's message
	}
	r.Events.Normal(ctx, obj, helmv2.UninstallSucceededReason, map[string]string{"revision": latest.ChartVersion},
		"Helm uninstall succeeded for release %s with chart %s", latest.FullName(), latest.VersionedChart())
	return nil
}
