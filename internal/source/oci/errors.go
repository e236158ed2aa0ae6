package oci

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/weir-gitops/weir/internal/source/neterr"
)

// Sentinels the reconciler maps to conditions. Every error this package
// returns matches at most one of them with errors.Is.
var (
	// ErrInvalidConfig means the URL, reference or a Secret cannot work as
	// given; retrying without a change is pointless.
	ErrInvalidConfig = errors.New("invalid oci configuration")
	// ErrAuth means the registry refused the credentials, or asked for some
	// and had none (HTTP 401/403, UNAUTHORIZED, DENIED).
	ErrAuth = errors.New("authentication failed")
	// ErrNotFound means the registry answered but has no such repository,
	// tag, manifest or blob, or no tag is in the semver range. See
	// NotFoundError.
	ErrNotFound = errors.New("not found")
	// ErrUnreachable means no registry conversation happened: DNS failure,
	// connection refused, or the deadline passed first.
	ErrUnreachable = errors.New("registry unreachable")
	// ErrTLS means the registry's certificate did not verify.
	ErrTLS = errors.New("tls verification failed")
	// ErrLayer means the artifact has no layer to select, or the selected
	// layer could not be extracted or copied (not a tarball, an unsafe
	// entry, too large).
	ErrLayer = errors.New("layer operation failed")
	// ErrVerification means no signature by a trusted key was found for
	// the digest.
	ErrVerification = errors.New("signature verification failed")
)

// NotFoundError names what the registry does not have.
type NotFoundError struct {
	// What is, for example, "tag 'v1.0.0'" or "manifest 'sha256:…'"; empty
	// when the repository itself is missing.
	What string
	// Repository is the repository asked, host included.
	Repository string
	// Err is the registry's answer, kept for errors.As; its text is left
	// out of the message when it only repeats the 404.
	Err error
}

func (e *NotFoundError) Error() string {
	if e.What == "" {
		return fmt.Sprintf("repository '%s' not found", e.Repository)
	}
	return fmt.Sprintf("%s not found in '%s'", e.What, e.Repository)
}

// Unwrap returns the registry's answer.
func (e *NotFoundError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// TagError is a failure to choose the tag of a semver reference: listing
// the tags, or finding none in range. Flux reports these with reason
// ReadOperationFailed rather than OCIArtifactPullFailed.
type TagError struct{ Err error }

func (e *TagError) Error() string { return e.Err.Error() }

// Unwrap returns the cause, which matches one of the sentinels.
func (e *TagError) Unwrap() error { return e.Err }

// kindError matches a sentinel with errors.Is without repeating the
// sentinel's text in its message.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string        { return e.err.Error() }
func (e *kindError) Unwrap() error        { return e.err }
func (e *kindError) Is(target error) bool { return target == e.kind }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// LayerError is a failure to select, extract or copy a layer. Its message
// is the cause's alone, so the reconciler can word it as Flux does.
type LayerError struct{ Err error }

func (e *LayerError) Error() string { return e.Err.Error() }

// Unwrap returns the cause (artifact.ErrUnsafeEntry, ErrArchiveTooLarge…).
func (e *LayerError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrLayer) true.
func (e *LayerError) Is(target error) bool { return target == ErrLayer }

func layerf(format string, args ...any) error {
	return &LayerError{Err: fmt.Errorf(format, args...)}
}

// classify turns what go-containerregistry, net/http and the context report
// into this package's sentinels, keeping the original error in the chain.
// what and repo name the object asked for, for not-found messages. ctx is the
// operation's context: once it is done, the deadline is the cause whatever
// the transport said.
func classify(ctx context.Context, err error, what, repo string) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{ErrInvalidConfig, ErrAuth, ErrNotFound, ErrUnreachable, ErrTLS, ErrLayer, ErrVerification} {
		if errors.Is(err, s) {
			return err
		}
	}
	if ctx.Err() != nil {
		if errors.Is(err, ctx.Err()) {
			return fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		return fmt.Errorf("%w: %w (%v)", ErrUnreachable, ctx.Err(), err) //nolint:errorlint // deliberate: the context is the cause; wrapping err would let its classification win
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		switch {
		case terr.StatusCode == http.StatusUnauthorized, terr.StatusCode == http.StatusForbidden,
			hasCode(terr, transport.UnauthorizedErrorCode, transport.DeniedErrorCode):
			return fmt.Errorf("%w: %w", ErrAuth, err)
		case terr.StatusCode == http.StatusNotFound,
			hasCode(terr, transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode):
			return &NotFoundError{What: what, Repository: repo, Err: err}
		}
		return err
	}
	switch {
	case neterr.IsTLS(err):
		return fmt.Errorf("%w: %w", ErrTLS, err)
	case neterr.IsDial(err):
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

func hasCode(e *transport.Error, codes ...transport.ErrorCode) bool {
	for _, d := range e.Errors {
		for _, c := range codes {
			if d.Code == c {
				return true
			}
		}
	}
	return false
}

// Classify is classify for callers outside the package that talk to a
// registry with go-containerregistry themselves (the image scanner): the
// same sentinels, so one mapping to condition reasons serves both.
func Classify(ctx context.Context, err error, what, repo string) error {
	return classify(ctx, err, what, repo)
}
