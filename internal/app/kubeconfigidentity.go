package app

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/internal/auth"
)

// kubeConfigIdentity is the identity spec.kubeConfig.configMapRef presents
// to a remote cluster, for the kustomize and helm controllers: Flux's
// ObjectLevelWorkloadIdentity gate, --default-kubeconfig-service-account,
// and a token cache sized by --token-cache-max-size and
// --token-cache-max-duration.
func kubeConfigIdentity(mgr ctrl.Manager, opts *Options, gates map[string]bool) *auth.Settings {
	return &auth.Settings{
		ObjectLevel:           gates[auth.FeatureGate],
		DefaultServiceAccount: opts.FluxOnly.DefaultKubeConfigSA,
		Client:                mgr.GetClient(),
		Reader:                mgr.GetAPIReader(),
		Cache:                 auth.NewCache(opts.FluxOnly.TokenCacheMaxSize, opts.FluxOnly.TokenCacheMaxDuration),
	}
}
