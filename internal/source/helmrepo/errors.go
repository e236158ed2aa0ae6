package helmrepo

import (
	"errors"
	"fmt"
)

// Kinds of failure. Every error this package returns matches at most one
// of them with errors.Is, so a controller can pick Flux's condition reason
// and decide whether retrying can help.
var (
	// ErrInvalidURL means spec.url (or a chart URL) cannot be used as
	// written; retrying without a spec change is pointless.
	ErrInvalidURL = errors.New("invalid Helm repository URL")
	// ErrUnsupported means the spec asks for something weir does not do yet
	// (a cloud provider login); it stalls until the spec changes.
	ErrUnsupported = errors.New("not supported")
	// ErrAuth means a referenced Secret is missing or malformed, or the
	// server refused the request (HTTP 401 or 403).
	ErrAuth = errors.New("authentication failed")
	// ErrTooLarge means an index or chart is bigger than its limit.
	ErrTooLarge = errors.New("too large")
	// ErrInvalidIndex means the index is not a Helm repository index.
	ErrInvalidIndex = errors.New("invalid index")
	// ErrNotFound means the server answered 404.
	ErrNotFound = errors.New("not found")
	// ErrFetch is any other failure to download: the server unreachable, a
	// 5xx answer, a TLS handshake refused, the timeout.
	ErrFetch = errors.New("fetch failed")
)

// kindError is a message that matches one of the kinds above.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string        { return e.err.Error() }
func (e *kindError) Unwrap() error        { return e.err }
func (e *kindError) Is(target error) bool { return target == e.kind }

// errorf formats a message of the given kind; %w wraps as fmt.Errorf does.
func errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, err: fmt.Errorf(format, args...)}
}
