package helmrelease

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// moveTarget uninstalls the release obj's status says it made when the
// spec now puts the release elsewhere (name, namespace, storage namespace,
// or chart name under Reinstall), then forgets its history and failures,
// so that the state machine installs the release at its new place. The
// old release is never left behind, unowned.
func (r *Reconciler) moveTarget(ctx context.Context, obj *helmv2.HelmRelease, chartName string) error {
	old, why, changed := release.TargetChange(obj, chartName)
	if !changed {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("release target configuration changed: uninstalling the current release",
		"why", why, "release", old.Namespace+"/"+old.Name, "storageNamespace", old.StorageNamespace)
	cfg, err := r.restConfig(ctx, obj)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("could not create Helm client: %w", err), Reason: helmv2.InitFailedReason}
	}
	helm, err := release.NewClient(cfg, release.Options{
		Name: old.Name, Namespace: old.Namespace, StorageNamespace: old.StorageNamespace,
		MaxHistory: obj.GetMaxHistory(), UseHelm3Defaults: r.Options.UseHelm3Defaults, Factories: &r.factories,
	})
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("could not create Helm client: %w", err), Reason: helmv2.InitFailedReason}
	}
	if err := r.uninstallWith(ctx, obj, helm); err != nil {
		r.Events.Warning(ctx, obj, helmv2.UninstallFailedReason, nil, "%s", err)
		return &errs.Generic{Err: err, Reason: helmv2.UninstallFailedReason}
	}
	obj.Status.ClearHistory()
	obj.Status.ClearFailures()
	return nil
}
