package kustomization

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
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
	// DefaultServiceAccount is --default-service-account.
	DefaultServiceAccount string
	// InsecureKubeConfigExec and InsecureKubeConfigTLS are the flags that
	// allow exec credential plugins and unverified TLS in spec.kubeConfig.
	InsecureKubeConfigExec bool
	InsecureKubeConfigTLS  bool

	mu    sync.Mutex
	local map[string]client.Client // by impersonated user ("" for none)
	httpc *http.Client
}

// For returns the client to apply obj's objects with.
func (f *ClientFactory) For(ctx context.Context, obj *kustomizev1.Kustomization) (client.Client, error) {
	sa := obj.Spec.ServiceAccountName
	if sa == "" {
		sa = f.DefaultServiceAccount
	}
	if obj.Spec.KubeConfig != nil {
		return f.remote(ctx, obj, sa)
	}
	user := ""
	if sa != "" {
		user = serviceAccountUser(obj.Namespace, sa)
	}
	return f.localClient(user)
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

func serviceAccountUser(ns, name string) string {
	return "system:serviceaccount:" + ns + ":" + name
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

// remote builds a client from the kubeconfig in spec.kubeConfig.secretRef.
// With a service account, it impersonates the account of that name in the
// namespace of the same name on the remote cluster, as Flux does.
func (f *ClientFactory) remote(ctx context.Context, obj *kustomizev1.Kustomization, sa string) (client.Client, error) {
	ref := obj.Spec.KubeConfig.SecretRef
	if ref == nil {
		return nil, &errs.Stalling{
			Err:    fmt.Errorf("spec.kubeConfig.configMapRef (workload identity) is not supported by weir yet: use spec.kubeConfig.secretRef"),
			Reason: "InvalidKubeConfig",
		}
	}
	var secret corev1.Secret
	key := types.NamespacedName{Namespace: obj.Namespace, Name: ref.Name}
	if err := f.Reader.Get(ctx, key, &secret); err != nil {
		return nil, fmt.Errorf("could not get KubeConfig secret '%s': %w", key, err)
	}
	var data []byte
	switch {
	case ref.Key != "":
		data = secret.Data[ref.Key]
		if data == nil {
			return nil, fmt.Errorf("KubeConfig secret '%s' does not contain a '%s' key with a kubeconfig", key, ref.Key)
		}
	case secret.Data["value"] != nil:
		data = secret.Data["value"]
	case secret.Data["value.yaml"] != nil:
		data = secret.Data["value.yaml"]
	default:
		return nil, fmt.Errorf("KubeConfig secret '%s' does not contain a 'value' or 'value.yaml' key with a kubeconfig", key)
	}
	cfg, err := f.restConfigFromKubeConfig(data, key)
	if err != nil {
		return nil, err
	}
	cfg = applyConfig(cfg)
	if sa != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: serviceAccountUser(obj.Namespace, sa)}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build kube client for KubeConfig secret '%s': %w", key, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("failed to build REST mapper for KubeConfig secret '%s': %w", key, err)
	}
	return client.New(cfg, client.Options{HTTPClient: hc, Scheme: f.Scheme, Mapper: mapper})
}

// restConfigFromKubeConfig parses a kubeconfig and refuses what the
// --insecure-kubeconfig-* flags do not allow: exec credential plugins (they
// run a program inside the controller) and skipped TLS verification.
func (f *ClientFactory) restConfigFromKubeConfig(data []byte, key types.NamespacedName) (*rest.Config, error) {
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("KubeConfig secret '%s' holds an invalid kubeconfig: %w", key, err)
	}
	for name, auth := range kc.AuthInfos {
		if auth.Exec != nil && !f.InsecureKubeConfigExec {
			return nil, &errs.Stalling{
				Err:    fmt.Errorf("KubeConfig secret '%s': user '%s' uses an exec credential plugin, which is refused unless the controller runs with --insecure-kubeconfig-exec", key, name),
				Reason: "InvalidKubeConfig",
			}
		}
		if auth.TokenFile != "" || auth.ClientCertificate != "" || auth.ClientKey != "" {
			return nil, &errs.Stalling{
				Err:    fmt.Errorf("KubeConfig secret '%s': user '%s' refers to files on the controller's disk; embed the credentials instead", key, name),
				Reason: "InvalidKubeConfig",
			}
		}
		if auth.AuthProvider != nil {
			return nil, &errs.Stalling{
				Err:    fmt.Errorf("KubeConfig secret '%s': user '%s' uses an auth provider plugin, which weir does not run", key, name),
				Reason: "InvalidKubeConfig",
			}
		}
	}
	for name, cluster := range kc.Clusters {
		if cluster.CertificateAuthority != "" {
			return nil, &errs.Stalling{
				Err:    fmt.Errorf("KubeConfig secret '%s': cluster '%s' refers to a CA file on the controller's disk; embed certificate-authority-data instead", key, name),
				Reason: "InvalidKubeConfig",
			}
		}
		if cluster.InsecureSkipTLSVerify && !f.InsecureKubeConfigTLS {
			return nil, &errs.Stalling{
				Err:    fmt.Errorf("KubeConfig secret '%s': cluster '%s' skips TLS verification, which is refused unless the controller runs with --insecure-kubeconfig-tls", key, name),
				Reason: "InvalidKubeConfig",
			}
		}
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("KubeConfig secret '%s' holds an unusable kubeconfig: %w", key, err)
	}
	return cfg, nil
}
