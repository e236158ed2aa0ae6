package kustomize

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// Decryptor decrypts SOPS content for Build (spec.decryption).
// internal/kustomize/decrypt implements it; Build sees only this interface, so this
// package does not depend on SOPS and decrypt is free to depend on it.
//
// Implementations must put no plaintext in their errors: Build prefixes
// them with the file or object at fault, and they end up in conditions and
// events.
type Decryptor interface {
	// DecryptFile returns the plaintext of data, a SOPS document read from
	// path (relative to the source root) for a secretGenerator or a patch.
	// format is "dotenv", "yaml", "json", "ini" or "binary", chosen as
	// kustomize-controller chooses it (see sourceFormat).
	DecryptFile(path, format string, data []byte) ([]byte, error)
	// DecryptObject returns obj decrypted when it is a whole SOPS document
	// or a Secret holding SOPS documents as values, and obj itself when
	// there is nothing to decrypt. It must not modify obj.
	DecryptObject(obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// decryptSource is a file kustomize-controller decrypts before the build:
// a secretGenerator file or env source, or a patch file.
type decryptSource struct {
	real          string // absolute, symlink-free
	rel           string // relative to the root, for messages
	field         string
	kustomization string // relative path of the kustomization naming it
	format        string
}

// decryptSources reads every decryptable source file once, before
// kustomize runs. Plaintext is served to kustomize from memory, never
// written to disk. Without a Decryptor an encrypted source fails the build:
// kustomize would copy its ciphertext into a Secret, where nothing marks it
// as encrypted any more.
func decryptSources(cfs *confinedFS, sources []decryptSource, dec Decryptor, allowEncrypted bool) error {
	for _, s := range sources {
		data, err := cfs.ReadFile(s.real)
		if err != nil {
			continue // kustomize reports an unreadable file itself
		}
		if !isSOPSDocument(data) {
			continue
		}
		if dec == nil {
			if allowEncrypted {
				continue
			}
			return &EncryptedError{File: s.rel, Field: s.field, Kustomization: s.kustomization}
		}
		plain, err := dec.DecryptFile(s.rel, s.format, data)
		if err != nil {
			return fmt.Errorf("decryption failed for '%s' (%s entry in %s): %w", s.rel, s.field, s.kustomization, err)
		}
		cfs.setOverlay(s.real, plain)
	}
	return nil
}

// decryptObjects replaces each object by its decryption, skipping those
// whose decryption is disabled by annotation.
func decryptObjects(objects []*unstructured.Unstructured, dec Decryptor) error {
	for i, o := range objects {
		if decryptionDisabled(o) {
			continue
		}
		out, err := dec.DecryptObject(o)
		if err != nil {
			return fmt.Errorf("decryption failed for '%s': %w", ObjectID(o), err)
		}
		objects[i] = out
	}
	return nil
}

// refuseEncrypted fails on the first object still holding SOPS content, so
// ciphertext is never applied. An object annotated decrypt: disabled is
// meant to reach the cluster encrypted (for an in-cluster operator to
// decrypt) and passes, except a v1 Secret with a sops stanza, which Flux
// refuses to apply whatever its annotations.
func refuseEncrypted(objects []*unstructured.Unstructured, configured bool) error {
	for _, o := range objects {
		secret := o.GetKind() == "Secret" && o.GetAPIVersion() == "v1"
		_, stanza := o.Object["sops"]
		if decryptionDisabled(o) && (!secret || !stanza) {
			continue
		}
		if objectEncrypted(o) {
			return &EncryptedError{Object: ObjectID(o), DecryptionConfigured: configured, secret: secret}
		}
	}
	return nil
}

// decryptionDisabled reports the kustomize.toolkit.fluxcd.io/decrypt:
// disabled annotation, compared without regard to case as Flux does.
func decryptionDisabled(o *unstructured.Unstructured) bool {
	v, ok := o.GetAnnotations()[kustomizev1.DecryptAnnotation]
	return ok && strings.EqualFold(v, kustomizev1.DisabledValue)
}
