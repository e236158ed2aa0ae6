package render

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// configureDecryption gives the build a SOPS decryptor holding the keys of
// spec.decryption.secretRef, read uncached. Without spec.decryption the
// build refuses any SOPS content (kustomize.ErrDecryptionRequired): nothing
// is ever applied encrypted.
func configureDecryption(ctx context.Context, reader client.Reader, obj *kustomizev1.Kustomization, opts *kustomize.BuildOptions) error {
	spec := obj.Spec.Decryption
	if spec == nil {
		return nil
	}
	if spec.Provider != kustomizev1.DecryptionProviderSOPS {
		return fmt.Errorf("unsupported decryption provider %q", spec.Provider)
	}
	var keys map[string][]byte
	if ref := spec.SecretRef; ref != nil {
		key := client.ObjectKey{Namespace: obj.Namespace, Name: ref.Name}
		var secret corev1.Secret
		if err := reader.Get(ctx, key, &secret); err != nil {
			return fmt.Errorf("cannot get %s decryption Secret '%s': %w", spec.Provider, key, err)
		}
		keys = secret.Data
	}
	dec, err := decrypt.New(keys)
	if err != nil {
		return fmt.Errorf("decryption Secret of Kustomization %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	opts.Decryptor = dec
	return nil
}
