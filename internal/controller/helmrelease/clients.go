package helmrelease

import (
	"context"

	"k8s.io/client-go/rest"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/restconfig"
)

// restConfig is the cluster and identity Helm acts with, resolved by
// internal/restconfig as for the Kustomization: the controller's own
// cluster, impersonating spec.serviceAccountName (or
// --default-service-account), or the cluster of spec.kubeConfig. Helm's
// storage follows the same config, so a remote release's storage Secrets
// live in the remote cluster, as in Flux.
func (r *Reconciler) restConfig(ctx context.Context, obj *helmv2.HelmRelease) (*rest.Config, error) {
	if r.Clusters == nil {
		return rest.CopyConfig(r.Config), nil
	}
	t, err := r.Clusters.Resolve(ctx, restconfig.Request{
		Namespace:          obj.Namespace,
		ServiceAccountName: obj.Spec.ServiceAccountName,
		KubeConfig:         obj.Spec.KubeConfig,
	})
	if err != nil {
		return nil, err
	}
	return t.Config, nil
}
