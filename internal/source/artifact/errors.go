package artifact

import "errors"

// Sentinel errors; every error this package returns wraps at most one of
// them, so callers decide with errors.Is whether retrying can help.
var (
	// ErrArchiveTooLarge: an archive being written or extracted exceeded its
	// size or entry bound. Retrying with the same input fails again.
	ErrArchiveTooLarge = errors.New("archive too large")

	// ErrUnsafeEntry: an archive entry would land outside the extraction
	// directory, is a kind of file weir never extracts (devices, FIFOs), or
	// a link that escapes. The archive is hostile or broken.
	ErrUnsafeEntry = errors.New("unsafe archive entry")

	// ErrInvalidPath: an artifact path or object identity does not have the
	// <kind>/<namespace>/<name>/<file> shape with plain segments.
	ErrInvalidPath = errors.New("invalid artifact path")

	// ErrDigestMismatch: the stored file no longer has the digest (or size)
	// recorded in the artifact.
	ErrDigestMismatch = errors.New("artifact digest mismatch")
)
