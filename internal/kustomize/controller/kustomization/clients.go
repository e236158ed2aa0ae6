package kustomization

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/auth"
)

// ClientFactory builds the uncached clients that apply a Kustomization's
// objects: as the controller itself, as spec.serviceAccountName (or
// --default-service-account) through impersonation, or in the cluster
// spec.kubeConfig names. Clients for the controller and for service accounts
// are built once and kept; remote clients are built per reconcile, since the
// kubeconfig Secret may change.
type ClientFactory struct {
	// Config is the controller's connection to its own cluster.
	Config *rest.Config
	// Mapper resolves kinds in the local cluster; it must discover kinds
	// created after it was made (controller-runtime's dynamic mapper does).
	Mapper apimeta.RESTMapper
	Scheme *runtime.Scheme
	// Reader reads kubeconfig Secrets.
	Reader client.Reader
	// DefaultServiceAccount, InsecureKubeConfigExec and
	// InsecureKubeConfigTLS are the lockdown flags internal/apply/restconfig
	// applies: --default-service-account, --insecure-kubeconfig-exec,
	// --insecure-kubeconfig-tls.
	DefaultServiceAccount  string
	InsecureKubeConfigExec bool
	InsecureKubeConfigTLS  bool
	// KubeConfigIdentity is the identity of spec.kubeConfig.configMapRef
	// (restconfig.Resolver.KubeConfigIdentity).
	KubeConfigIdentity *auth.Settings
	// RemoteWrap wraps the transport of spec.kubeConfig clusters
	// (restconfig.Resolver.RemoteWrap): the sharding fence.
	RemoteWrap func(http.RoundTripper) http.RoundTripper

	mu    sync.Mutex
	local map[string]client.Client // by impersonated user ("" for none)
	httpc *http.Client
}

// For returns the client to apply obj's objects with.
func (f *ClientFactory) For(ctx context.Context, obj *kustomizev1.Kustomization) (client.Client, error) {
	resolver := restconfig.Resolver{
		Config: f.Config, Reader: f.Reader, DefaultServiceAccount: f.DefaultServiceAccount,
		InsecureKubeConfigExec: f.InsecureKubeConfigExec, InsecureKubeConfigTLS: f.InsecureKubeConfigTLS,
		KubeConfigIdentity: f.KubeConfigIdentity, RemoteWrap: f.RemoteWrap,
	}
	t, err := resolver.Resolve(ctx, restconfig.Request{
		Namespace: obj.Namespace, ServiceAccountName: obj.Spec.ServiceAccountName, KubeConfig: obj.Spec.KubeConfig,
	})
	if err != nil {
		return nil, err
	}
	if t.Remote {
		return f.remote(t.Config, kubeConfigSource(obj.Spec.KubeConfig))
	}
	return f.localClient(t.User)
}

// applyConfig returns a copy of cfg for a client that applies: without a
// client-side rate limiter. A reconcile already bounds its requests in
// flight to --concurrent-ssa, and the API server's priority and fairness
// protects it from the sum; a token bucket on top (--kube-api-qps, 50/s)
// turns a no-op reconcile of 1,500 objects — one dry-run each — into half
// a minute of waiting on the client's own limiter.
func applyConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = -1, 0, nil
	return c
}

func (f *ClientFactory) localClient(user string) (client.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.local[user]; ok {
		return c, nil
	}
	if f.httpc == nil {
		hc, err := rest.HTTPClientFor(f.Config)
		if err != nil {
			return nil, fmt.Errorf("failed to build kube client: %w", err)
		}
		f.httpc = hc
	}
	cfg := applyConfig(f.Config)
	hc := f.httpc
	if user != "" {
		// Impersonation headers are added by the transport, so an
		// impersonating config needs its own HTTP client.
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		var err error
		if hc, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("failed to build kube client for %s: %w", user, err)
		}
	}
	c, err := client.New(cfg, client.Options{HTTPClient: hc, Scheme: f.Scheme, Mapper: f.Mapper})
	if err != nil {
		return nil, fmt.Errorf("failed to build kube client: %w", err)
	}
	if f.local == nil {
		f.local = map[string]client.Client{}
	}
	f.local[user] = c
	return c, nil
}

// kubeConfigSource names where a remote cluster's access comes from, for
// messages: "KubeConfig secret 'NAME'" or "KubeConfig ConfigMap 'NAME'".
func kubeConfigSource(ref *meta.KubeConfigReference) string {
	if ref.ConfigMapRef != nil {
		return "KubeConfig ConfigMap '" + ref.ConfigMapRef.Name + "'"
	}
	return "KubeConfig secret '" + ref.SecretRef.Name + "'"
}

// remote builds a client for the cluster of spec.kubeConfig (source names
// it), with its own REST mapper: the remote cluster's kinds are not the
// local ones.
func (f *ClientFactory) remote(cfg *rest.Config, source string) (client.Client, error) {
	cfg = applyConfig(cfg)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build kube client for %s: %w", source, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("failed to build REST mapper for %s: %w", source, err)
	}
	return client.New(cfg, client.Options{HTTPClient: hc, Scheme: f.Scheme, Mapper: mapper})
}
