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
