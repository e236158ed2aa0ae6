package restconfig

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// InvalidKubeConfigReason is the Ready and Stalled reason of a
// spec.kubeConfig weir refuses.
const InvalidKubeConfigReason = "InvalidKubeConfig"

// Resolver turns what an object asks for into a rest.Config.
type Resolver struct {
	// Config is the controller's connection to its own cluster.
	Config *rest.Config
	// Reader reads kubeconfig Secrets (uncached).
	Reader client.Reader
	// DefaultServiceAccount is --default-service-account: impersonated
	// when an object names none.
	DefaultServiceAccount string
	// InsecureKubeConfigExec and InsecureKubeConfigTLS are the flags that
	// allow exec credential plugins and unverified TLS in spec.kubeConfig.
	InsecureKubeConfigExec bool
	InsecureKubeConfigTLS  bool
	// KubeConfigIdentity decides whose token spec.kubeConfig.configMapRef
	// presents (the ObjectLevelWorkloadIdentity gate,
	// --default-kubeconfig-service-account), asks the API server for it
	// and keeps it (--token-cache-max-size); nil refuses a ServiceAccount
	// named in the ConfigMap.
	KubeConfigIdentity *auth.Settings
	// GCP and Azure reach Google's and Azure's token services and
	// cluster APIs for providers gcp and azure; nil is gcp.Default and
	// azure.Default. AWS's endpoints are the SDK's.
	GCP   *gcp.Provider
	Azure *azure.Provider
	// RemoteWrap, when set, wraps the transport of every spec.kubeConfig
	// cluster's config: with --shard-mode=auto the membership's fence
	// (design 0037), so a replica that lost its Lease writes to no remote
	// cluster either. The local config comes fenced already.
	RemoteWrap func(http.RoundTripper) http.RoundTripper
}

// Request is what an object asks for.
type Request struct {
	// Namespace is the object's namespace: where the service account and
	// the kubeconfig Secret are.
	Namespace string
	// ServiceAccountName is spec.serviceAccountName.
	ServiceAccountName string
	// KubeConfig is spec.kubeConfig.
	KubeConfig *meta.KubeConfigReference
}

// Target is a resolved identity and cluster.
type Target struct {
	// Config is a copy the caller may change.
	Config *rest.Config
	// User is the impersonated user, "" for the controller's own identity.
	User string
	// Remote is true for a cluster of spec.kubeConfig.
	Remote bool
}

// ServiceAccountUser is the user name the API server gives service
// account name of namespace ns.
func ServiceAccountUser(ns, name string) string {
	return "system:serviceaccount:" + ns + ":" + name
}

// Resolve returns the identity and cluster of req. With a kubeConfig and a
// service account, the account of that name in the object's namespace is
// impersonated on the remote cluster, as Flux does.
func (r *Resolver) Resolve(ctx context.Context, req Request) (*Target, error) {
	sa := req.ServiceAccountName
	if sa == "" {
		sa = r.DefaultServiceAccount
	}
	t := &Target{}
	if sa != "" {
		t.User = ServiceAccountUser(req.Namespace, sa)
	}
	if req.KubeConfig == nil {
		t.Config = rest.CopyConfig(r.Config)
	} else {
		cfg, err := r.remote(ctx, req)
		if err != nil {
			return nil, err
		}
		if r.RemoteWrap != nil {
			cfg.Wrap(r.RemoteWrap)
		}
		t.Config, t.Remote = cfg, true
	}
	if t.User != "" {
		t.Config.Impersonate = rest.ImpersonationConfig{UserName: t.User}
	}
	return t, nil
}

// remote builds the config of spec.kubeConfig.configMapRef, or reads the
// kubeconfig in spec.kubeConfig.secretRef (key, else
// `value`, else `value.yaml`, as Flux reads it).
func (r *Resolver) remote(ctx context.Context, req Request) (*rest.Config, error) {
	if req.KubeConfig.ConfigMapRef != nil {
		return r.fromConfigMap(ctx, req)
	}
	ref := req.KubeConfig.SecretRef
	if ref == nil {
		return nil, &errs.Stalling{
			Err:    errors.New("exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified"),
			Reason: InvalidKubeConfigReason,
		}
	}
	var secret corev1.Secret
	key := types.NamespacedName{Namespace: req.Namespace, Name: ref.Name}
	if err := r.Reader.Get(ctx, key, &secret); err != nil {
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
	return r.fromKubeConfig(data, key)
}
