package helmrelease

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
)

// restConfig is the cluster and identity Helm acts with, resolved by
// internal/apply/restconfig as for the Kustomization: the controller's own
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

// identityGone reports whether the release can no longer be reached as
// spec says, so that deleting the HelmRelease must not wait for an
// uninstall that cannot happen (a namespace being deleted takes the
// service account and the kubeconfig Secret with it; Flux skips the
// uninstall then too): the kubeconfig Secret is gone, or, in the local
// cluster, the impersonated service account is.
func (r *Reconciler) identityGone(ctx context.Context, obj *helmv2.HelmRelease) bool {
	if r.Clusters == nil {
		return false
	}
	log := ctrl.LoggerFrom(ctx)
	if kc := obj.Spec.KubeConfig; kc != nil {
		if kc.SecretRef == nil {
			return false
		}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: kc.SecretRef.Name}, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			log.Info("skipping Helm release uninstallation: the kubeConfig Secret is gone", "secret", kc.SecretRef.Name)
			return true
		}
		return false
	}
	sa := obj.Spec.ServiceAccountName
	if sa == "" {
		sa = r.Clusters.DefaultServiceAccount
	}
	if sa == "" {
		return false
	}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: sa}, &corev1.ServiceAccount{})
	if apierrors.IsNotFound(err) {
		log.Info("skipping Helm release uninstallation: the service account is gone", "serviceAccount", sa)
		return true
	}
	return false
}
