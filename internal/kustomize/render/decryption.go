package render

import (
	"context"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// configureDecryption gives the build a SOPS decryptor holding the keys
// and key-service credentials of spec.decryption.secretRef, read uncached
// (or, without a secretRef, the age keys of --sops-age-secret), and the
// identity spec.decryption.serviceAccountName picks. Without
// spec.decryption the build refuses any SOPS content
// (kustomize.ErrDecryptionRequired): nothing is ever applied encrypted.
func configureDecryption(ctx context.Context, reader client.Reader, obj *kustomizev1.Kustomization, opts Options, build *kustomize.BuildOptions) error {
	spec := obj.Spec.Decryption
	if spec == nil {
		return nil
	}
	if spec.Provider != kustomizev1.DecryptionProviderSOPS {
		return fmt.Errorf("unsupported decryption provider %q", spec.Provider)
	}
	keys, err := decryptionKeys(ctx, reader, obj, opts.SOPSAgeSecret)
	if err != nil {
		return err
	}
	identity, err := decryptionIdentity(opts.Identity, obj)
	if err != nil {
		return err
	}
	if opts.Identity != nil && opts.SOPSVaultConfigMap != nil {
		id, _ := opts.Identity.IdentityFor(obj.Namespace, spec.ServiceAccountName) // decryptionIdentity checked it
		login := &vaultLogin{reader: reader, key: *opts.SOPSVaultConfigMap, settings: opts.Identity, id: id}
		identity.Vault, identity.VaultRefused = login.token, login.refused
	}
	dec, err := decrypt.New(keys, identity)
	if err != nil {
		return fmt.Errorf("decryption Secret of Kustomization %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	build.Decryptor = dec
	return nil
}

// decryptionKeys reads the decryption Secret's data. Without a secretRef,
// Flux's global age Secret (--sops-age-secret) lends its .agekey entries
// and nothing else: cloud credentials there would stand in for workload
// identity.
func decryptionKeys(ctx context.Context, reader client.Reader, obj *kustomizev1.Kustomization, ageSecret *client.ObjectKey) (map[string][]byte, error) {
	spec := obj.Spec.Decryption
	if ref := spec.SecretRef; ref != nil {
		key := client.ObjectKey{Namespace: obj.Namespace, Name: ref.Name}
		var secret corev1.Secret
		if err := reader.Get(ctx, key, &secret); err != nil {
			return nil, fmt.Errorf("cannot get %s decryption Secret '%s': %w", spec.Provider, key, err)
		}
		return secret.Data, nil
	}
	if ageSecret == nil {
		return nil, nil
	}
	var secret corev1.Secret
	if err := reader.Get(ctx, *ageSecret, &secret); err != nil {
		return nil, fmt.Errorf("cannot get %s SOPS age decryption Secret '%s': %w", spec.Provider, ageSecret, err)
	}
	keys := map[string][]byte{}
	for name, value := range secret.Data {
		if filepath.Ext(name) == decrypt.AgeKeySuffix {
			keys[name] = value
		}
	}
	return keys, nil
}

// decryptionIdentity is the identity the decryption presents to key
// services besides the Secret's credentials. Without settings (`weir
// build`, the fleet loader) it is the caller's own environment, and
// serviceAccountName is not followed: a person builds with their own
// credentials.
func decryptionIdentity(settings *auth.Settings, obj *kustomizev1.Kustomization) (decrypt.Options, error) {
	if settings == nil {
		return decrypt.Options{}, nil
	}
	id, err := settings.IdentityFor(obj.Namespace, obj.Spec.Decryption.ServiceAccountName)
	if err != nil {
		return decrypt.Options{}, fmt.Errorf("to use spec.decryption.serviceAccountName for decryption authentication please enable the %s feature gate in the controller: %w", auth.FeatureGate, err)
	}
	if !id.ObjectLevel() {
		return decrypt.Options{}, nil
	}
	return objectIdentity(settings, id), nil
}
