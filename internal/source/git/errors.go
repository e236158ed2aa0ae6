package git

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/weir-gitops/weir/internal/source/neterr"
)

// Sentinels the reconciler maps to conditions. Every error this package
// returns for a failed remote operation matches at most one of them with
// errors.Is; configuration problems match ErrInvalidConfig. None of the
// messages carry secret values.
var (
	// ErrInvalidConfig means the URL, Secret, reference or options cannot
	// work as given; retrying without a spec or Secret change is pointless.
	ErrInvalidConfig = errors.New("invalid git configuration")
	// ErrAuth means the server refused the credentials (HTTP 401/403, SSH
	// public key rejected).
	ErrAuth = errors.New("authentication failed")
	// ErrHostKey means the SSH server's host key is not in known_hosts, or
	// differs from the key recorded there. See HostKeyError.
	ErrHostKey = errors.New("ssh host key verification failed")
	// ErrTLS means the HTTPS server's certificate did not verify against
	// the system roots plus the Secret's CA.
	ErrTLS = errors.New("tls verification failed")
	// ErrUnreachable means no Git conversation happened: DNS failure,
	// connection refused, or the deadline passed first. Timeouts also
	// match context.DeadlineExceeded.
	ErrUnreachable = errors.New("git remote unreachable")
	// ErrRepositoryNotFound means the server answered but has no such
	// repository (HTTP 404, SSH "repository not found").
	ErrRepositoryNotFound = errors.New("repository not found")
	// ErrRefNotFound means the repository exists but the reference does
	// not. See RefNotFoundError.
	ErrRefNotFound = errors.New("reference not found")
	// ErrPathNotFound means a sparse checkout directory is not in the
	// checked-out tree.
	ErrPathNotFound = errors.New("path not found in repository")
	// ErrVerification means a signature is missing, malformed, or made by a
	// key that is not trusted.
	ErrVerification = errors.New("signature verification failed")
)

// RefNotFoundError names the reference that the remote does not have.
type RefNotFoundError struct {
	// Ref is what was looked for: a full reference name such as
	// refs/tags/v1.0.0, "commit <sha>", or "semver <constraint>".
	Ref string
	// Reason adds detail, e.g. "remote repository is empty".
	Reason string
}

func (e *RefNotFoundError) Error() string {
	msg := fmt.Sprintf("reference %q not found", e.Ref)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Is makes errors.Is(err, ErrRefNotFound) true.
func (e *RefNotFoundError) Is(target error) bool { return target == ErrRefNotFound }

// HostKeyError says why the SSH server's host key was refused.
type HostKeyError struct {
	// Host is the known_hosts form of the address: "host" for port 22,
	// "[host]:port" otherwise.
	Host string
	// Fingerprint is the SHA256 fingerprint of the key the server offered.
	Fingerprint string
	// Unknown is true when known_hosts has no key for Host at all, false
	// when it has keys but none equals the offered one (or the key is
	// marked @revoked, see Revoked).
	Unknown bool
	// Revoked is true when known_hosts marks the offered key @revoked.
	Revoked bool
}

func (e *HostKeyError) Error() string {
	switch {
	case e.Revoked:
		return fmt.Sprintf("ssh host key %s of %s is marked @revoked in known_hosts", e.Fingerprint, e.Host)
	case e.Unknown:
		return fmt.Sprintf("ssh host %s is not in known_hosts (offered key %s)", e.Host, e.Fingerprint)
	default:
		return fmt.Sprintf("ssh host key mismatch for %s: offered key %s is not the one in known_hosts", e.Host, e.Fingerprint)
	}
}

// Is makes errors.Is(err, ErrHostKey) true.
func (e *HostKeyError) Is(target error) bool { return target == ErrHostKey }

// invalidf returns an ErrInvalidConfig error with a formatted detail.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// classify turns what go-git, net/http, x/crypto/ssh and the context report
// into this package's sentinels, keeping the original error in the chain.
// ctx is the operation's context: when it is done, the deadline (or
// cancellation) is the cause whatever the transport said.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	// Already classified (HostKeyError, RefNotFoundError, our own wraps).
	for _, s := range []error{ErrInvalidConfig, ErrHostKey, ErrRefNotFound, ErrPathNotFound, ErrVerification, ErrUnreachable} {
		if errors.Is(err, s) {
			return err
		}
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w: %w", ErrUnreachable, contextCause(ctx, err))
	}
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired),
		errors.Is(err, transport.ErrAuthorizationFailed),
		strings.Contains(err.Error(), "ssh: unable to authenticate"):
		return fmt.Errorf("%w: %w", ErrAuth, err)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%w: %w", ErrRepositoryNotFound, err)
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return err // callers turn this into a RefNotFoundError with context
	case neterr.IsTLS(err):
		return fmt.Errorf("%w: %w", ErrTLS, err)
	case neterr.IsDial(err):
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// contextCause prefers context.DeadlineExceeded/Canceled over whatever the
// closed connection made the transport say: the transport's error is kept in
// the message only, so the context's error is the one cause in the chain.
func contextCause(ctx context.Context, err error) error {
	if errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w (%v)", ctx.Err(), err) //nolint:errorlint // deliberate: the context is the cause; wrapping err would let its sentinels win
}

// refNotFound turns go-git's "no such ref" answers into a RefNotFoundError
// naming ref; other errors pass through classify.
func refNotFound(ctx context.Context, err error, ref string) error {
	switch {
	case errors.Is(err, gogit.NoMatchingRefSpecError{}), errors.Is(err, plumbing.ErrReferenceNotFound):
		return &RefNotFoundError{Ref: ref}
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return &RefNotFoundError{Ref: ref, Reason: "remote repository is empty"}
	}
	return classify(ctx, err)
}
