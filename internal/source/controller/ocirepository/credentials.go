package ocirepository

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/registry"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// remoteOptions reads what reaching the registry takes: credentials from
// spec.secretRef and the ServiceAccount's image pull secrets, else, for a
// cloud provider, a login with the identity IdentityFor decides; TLS
// material from spec.certSecretRef, and spec.proxySecretRef.
func (r *Reconciler) remoteOptions(ctx context.Context, obj *sourcev1.OCIRepository) (oci.Options, error) {
	opts := oci.Options{Insecure: obj.Spec.Insecure}
	keychain, err := r.keychain(ctx, obj)
	if err != nil {
		return opts, &errs.Generic{Err: fmt.Errorf("failed to get credential: %w", err), Reason: sourcev1.AuthenticationFailedReason}
	}
	if keychain != nil {
		opts.Keychain = keychain
	}
	if obj.Spec.ProxySecretRef != nil {
		secret, err := r.secret(ctx, obj.Namespace, obj.Spec.ProxySecretRef.Name)
		if err == nil {
			opts.Proxy, err = oci.NewProxyURL(secret.Data)
		}
		if err != nil {
			return opts, &errs.Generic{Err: fmt.Errorf("failed to get proxy address: %w", err), Reason: sourcev1.AuthenticationFailedReason}
		}
	}
	if p := obj.Spec.Provider; keychain == nil && p != "" && p != sourcev1.GenericOCIProvider {
		if opts.Keychain, err = r.providerLogin(ctx, obj, opts.Proxy); err != nil {
			return opts, err
		}
	}
	if obj.Spec.CertSecretRef != nil {
		secret, err := r.secret(ctx, obj.Namespace, obj.Spec.CertSecretRef.Name)
		if err == nil {
			opts.TLS, err = oci.NewTLSConfig(secret.Data)
		}
		if err != nil {
			return opts, &errs.Generic{Err: fmt.Errorf("failed to generate transport for '%s': %w", obj.Spec.URL, err), Reason: sourcev1.AuthenticationFailedReason}
		}
	}
	return opts, nil
}

// providerLogin asks spec.provider's registry for credentials, as Flux
// does when no Secret gives any: with spec.serviceAccountName (which needs
// the ObjectLevelWorkloadIdentity gate, else the object stalls with Flux's
// message), the lockdown default, or the controller's identity. The
// exchange goes through spec.proxySecretRef's proxy, as Flux's does.
func (r *Reconciler) providerLogin(ctx context.Context, obj *sourcev1.OCIRepository, proxy *url.URL) (authn.Keychain, error) {
	id, err := r.Auth.IdentityFor(obj.Namespace, obj.Spec.ServiceAccountName)
	if errors.Is(err, auth.ErrObjectLevelDisabled) {
		return nil, &errs.Stalling{Reason: meta.FeatureGateDisabledReason, Err: fmt.Errorf(
			"to use spec.serviceAccountName for provider authentication please enable the %s feature gate in the controller", auth.FeatureGate)}
	}
	login, err := registry.Login(ctx, obj.Spec.Provider, obj.Spec.URL, id, r.Auth.WithProxy(proxy))
	if err != nil {
		err = fmt.Errorf("failed to get credential from %s: %w", obj.Spec.Provider, err)
		if errors.Is(err, registry.ErrUnsupportedProvider) {
			return nil, &errs.Stalling{Err: err, Reason: sourcev1.AuthenticationFailedReason}
		}
		return nil, &errs.Generic{Err: err, Reason: sourcev1.AuthenticationFailedReason}
	}
	host, _ := registry.Host(obj.Spec.URL)
	return registry.Keychain(host, login), nil
}

// keychain reads the docker config Secrets: spec.secretRef first, then the
// image pull secrets of spec.serviceAccountName. It returns nil when there
// are none (anonymous access).
func (r *Reconciler) keychain(ctx context.Context, obj *sourcev1.OCIRepository) (*oci.Keychain, error) {
	var configs []map[string][]byte
	if obj.Spec.SecretRef != nil {
		secret, err := r.secret(ctx, obj.Namespace, obj.Spec.SecretRef.Name)
		if err != nil {
			return nil, err
		}
		configs = append(configs, secret.Data)
	}
	if name := obj.Spec.ServiceAccountName; name != "" {
		var sa corev1.ServiceAccount
		if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: name}, &sa); err != nil {
			return nil, fmt.Errorf("failed to get service account '%s/%s': %w", obj.Namespace, name, err)
		}
		for _, ref := range sa.ImagePullSecrets {
			secret, err := r.secret(ctx, obj.Namespace, ref.Name)
			if err != nil {
				return nil, fmt.Errorf("image pull secret of service account '%s/%s': %w", obj.Namespace, name, err)
			}
			configs = append(configs, secret.Data)
		}
	}
	if len(configs) == 0 {
		return nil, nil
	}
	return oci.NewKeychain(configs...)
}

func (r *Reconciler) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("failed to get secret '%s/%s': %w", namespace, name, err)
	}
	return &s, nil
}
