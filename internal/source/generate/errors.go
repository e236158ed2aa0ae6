package generate

import (
	"errors"
	"fmt"
)

// ErrInvalidSpec marks errors of the spec itself (a copy from an unknown
// alias, a destination climbing out with "..", a pathPattern whose
// captures cannot name objects): running again with the same spec fails
// the same way, so the controller stalls instead of retrying.
var ErrInvalidSpec = errors.New("invalid spec")

// ErrUnsafeSource marks a source tree the build refuses to read: a
// symbolic link whose target leaves the source or is a directory.
var ErrUnsafeSource = errors.New("unsafe source")

// ErrTooLarge marks an artifact over one of its Options bounds.
var ErrTooLarge = errors.New("artifact too large")

type markedError struct {
	mark error
	err  error
}

func (e *markedError) Error() string { return e.err.Error() }
func (e *markedError) Unwrap() []error {
	return []error{e.mark, e.err}
}

func specErrorf(format string, args ...any) error {
	return &markedError{mark: ErrInvalidSpec, err: fmt.Errorf(format, args...)}
}

func mark(m error, format string, args ...any) error {
	return &markedError{mark: m, err: fmt.Errorf(format, args...)}
}
