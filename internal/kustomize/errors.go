package kustomize

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Sentinels callers can test with errors.Is. Every one of them is terminal
// for a given source revision: retrying the same build cannot succeed.
var (
	// ErrUnsafePath marks a path that is absolute, climbs out of the source
	// root with "..", or leaves it through a symlink.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrRemoteDisallowed marks a reference to a remote base, file or URL
	// while remote bases are disabled.
	ErrRemoteDisallowed = errors.New("remote references are disabled")
	// ErrHelmUnsupported marks a kustomization asking kustomize to inflate
	// Helm charts, which would run the helm binary.
	ErrHelmUnsupported = errors.New("helm chart inflation is not supported")
	// ErrPluginsDisabled marks a kustomization that needs an external
	// kustomize plugin or KRM function; none may run.
	ErrPluginsDisabled = errors.New("kustomize plugins are disabled")
	// ErrVariableNotSet marks a ${var} with no value and no default in strict
	// substitution.
	ErrVariableNotSet = errors.New("variable not set (strict mode)")
)

// UnsafePathError names a path, relative to the source root, that Build
// refused to touch.
type UnsafePathError struct {
	Path   string // as referenced, relative to the source root
	Reason string
}

func (e *UnsafePathError) Error() string {
	return fmt.Sprintf("path %q refused: %s", e.Path, e.Reason)
}

func (e *UnsafePathError) Unwrap() error { return ErrUnsafePath }

// RemoteError names a remote reference found while remote bases are
// disabled, and the kustomization that made it.
type RemoteError struct {
	URL   string
	File  string // kustomization file, relative to the source root
	Field string // kustomization field holding the reference
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s: %s entry %q is remote, and remote bases are disabled", e.File, e.Field, e.URL)
}

func (e *RemoteError) Unwrap() error { return ErrRemoteDisallowed }

// buildError carries a kustomize error with the source root stripped from
// its text, so messages name repository-relative paths, never a temporary
// directory; the original stays reachable through Unwrap.
type buildError struct {
	msg string
	err error
}

func (e *buildError) Error() string { return e.msg }
func (e *buildError) Unwrap() error { return e.err }

// relativize rewrites occurrences of root in err's message.
func relativize(err error, root string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := strings.ReplaceAll(msg, root+string(filepath.Separator), "")
	clean = strings.ReplaceAll(clean, root, ".")
	if clean == msg {
		return err
	}
	return &buildError{msg: clean, err: err}
}

// Sentinels of decryption (see decryption.go). Unlike those above, they can
// clear without a new source revision: the Kustomization's decryption
// settings or its key Secret may change.
var (
	// ErrDecryptionRequired marks SOPS-encrypted content in a build that
	// has no Decryptor: an object or a secretGenerator or patch file.
	ErrDecryptionRequired = errors.New("SOPS decryption is required")
	// ErrStillEncrypted marks SOPS ciphertext left in the output of a build
	// that has a Decryptor: content decryption does not cover, such as a
	// ConfigMap generated from an encrypted file.
	ErrStillEncrypted = errors.New("SOPS-encrypted content left after decryption")
)

// EncryptedError names SOPS-encrypted content Build refused to pass on,
// by name only. It wraps ErrDecryptionRequired, or ErrStillEncrypted when
// decryption was configured.
type EncryptedError struct {
	// Object is the Kind/namespace/name of the object, when an object is
	// at fault.
	Object string
	// File is the file, relative to the source root, when a file is at
	// fault, and Field the kustomization field that names it, in the
	// kustomization file Kustomization.
	File, Field, Kustomization string
	// DecryptionConfigured is set when the build had a Decryptor.
	DecryptionConfigured bool

	secret bool // a v1 Secret, named as Flux names it
}

func (e *EncryptedError) Error() string {
	switch {
	case e.DecryptionConfigured:
		return fmt.Sprintf("%s holds SOPS-encrypted content that decryption does not cover "+
			"(only Secrets, whole SOPS documents and secretGenerator and patch files are decrypted); "+
			"refusing to apply ciphertext", e.Object)
	case e.File != "":
		return fmt.Sprintf("%s is SOPS encrypted, configuring decryption is required for this file to be read "+
			"(%s entry in %s)", e.File, e.Field, e.Kustomization)
	case e.secret:
		// kustomize-controller's wording, so alerts and searches match.
		return fmt.Sprintf("%s is SOPS encrypted, configuring decryption is required for this secret to be reconciled", e.Object)
	default:
		return fmt.Sprintf("%s is SOPS encrypted, configuring decryption is required for this object to be reconciled", e.Object)
	}
}

func (e *EncryptedError) Unwrap() error {
	if e.DecryptionConfigured {
		return ErrStillEncrypted
	}
	return ErrDecryptionRequired
}
