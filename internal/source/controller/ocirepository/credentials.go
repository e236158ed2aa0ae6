package ocirepository

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// remoteOptions reads what reaching the registry takes: credentials from
// spec.secretRef and the ServiceAccount's image pull secrets, TLS material
// from spec.certSecretRef, and spec.proxySecretRef.
func (r *Reconciler) remoteOptions(ctx context.Context, obj *sourcev1.OCIRepository) (oci.Options, error) {
	opts := oci.Options{Insecure: obj.Spec.Insecure}
	if p := obj.Spec.Provider; p != "" && p != sourcev1.GenericOCIProvider {
		return opts, &errs.Stalling{
			Err:    fmt.Errorf("failed to get credential: provider '%s' is not supported yet by weir; use 'generic' with spec.secretRef or spec.serviceAccountName", p),
			Reason: sourcev1.AuthenticationFailedReason,
		}
	}
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
