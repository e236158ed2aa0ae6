package scan

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/source/oci"
	"github.com/weir-gitops/weir/internal/version"
)

// Credentials reads what reaching repo's registry takes, through reader
// (uncached Secrets): the docker configs of spec.secretRef and of the
// image pull secrets of spec.serviceAccountName, in that order, TLS
// material from spec.certSecretRef and the proxy of spec.proxySecretRef.
// spec.insecure allows plain HTTP only (ParseImage); unlike
// OCIRepository's, it never turns TLS verification off.
func Credentials(ctx context.Context, reader client.Reader, repo *imagev1.ImageRepository) (oci.Options, error) {
	var opts oci.Options
	configs, err := dockerConfigs(ctx, reader, repo)
	if err != nil {
		return opts, err
	}
	if len(configs) > 0 {
		kc, err := oci.NewKeychain(configs...)
		if err != nil {
			return opts, err
		}
		opts.Keychain = kc
	}
	if ref := repo.Spec.CertSecretRef; ref != nil {
		s, err := secret(ctx, reader, repo.Namespace, ref.Name)
		if err == nil {
			opts.TLS, err = oci.NewTLSConfig(s.Data)
		}
		if err != nil {
			return opts, fmt.Errorf("failed to get TLS configuration: %w", err)
		}
	}
	if ref := repo.Spec.ProxySecretRef; ref != nil {
		s, err := secret(ctx, reader, repo.Namespace, ref.Name)
		if err == nil {
			opts.Proxy, err = oci.NewProxyURL(s.Data)
		}
		if err != nil {
			return opts, fmt.Errorf("failed to get proxy address: %w", err)
		}
	}
	return opts, nil
}

func dockerConfigs(ctx context.Context, reader client.Reader, repo *imagev1.ImageRepository) ([]map[string][]byte, error) {
	var configs []map[string][]byte
	if ref := repo.Spec.SecretRef; ref != nil {
		s, err := secret(ctx, reader, repo.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		configs = append(configs, s.Data)
	}
	if sa := repo.Spec.ServiceAccountName; sa != "" {
		var account corev1.ServiceAccount
		if err := reader.Get(ctx, client.ObjectKey{Namespace: repo.Namespace, Name: sa}, &account); err != nil {
			return nil, fmt.Errorf("failed to get service account '%s/%s': %w", repo.Namespace, sa, err)
		}
		for _, ref := range account.ImagePullSecrets {
			s, err := secret(ctx, reader, repo.Namespace, ref.Name)
			if err != nil {
				return nil, fmt.Errorf("image pull secret of service account '%s/%s': %w", repo.Namespace, sa, err)
			}
			configs = append(configs, s.Data)
		}
	}
	return configs, nil
}

func secret(ctx context.Context, reader client.Reader, namespace, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("failed to get secret '%s/%s': %w", namespace, name, err)
	}
	return &s, nil
}

// Digest is the manifest digest of repo:tag, from one HEAD request.
func Digest(ctx context.Context, repo name.Repository, tag string, o Options) (string, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	ref := repo.Tag(tag)
	desc, err := remote.Head(ref, remoteOptions(ctx, o)...)
	if err != nil {
		return "", fmt.Errorf("failed fetching descriptor for %q: %w", ref.String(), oci.Classify(ctx, err, "tag '"+tag+"'", repo.String()))
	}
	return desc.Digest.String(), nil
}

func remoteOptions(ctx context.Context, o Options) []remote.Option {
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(oci.NewTransport(o.Options)),
		remote.WithUserAgent("weir/" + version.Version),
	}
	if o.Keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(o.Keychain))
	}
	return opts
}
