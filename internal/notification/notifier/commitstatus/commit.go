package commitstatus

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Metadata keys a commit is read from, most specific first: the commit of
// RFC-0008 events, the origin revision of an artifact built from Git (an
// OCI artifact's org.opencontainers.image.revision), the source revision.
var commitKeys = []string{"event.toolkit.fluxcd.io/commit", "commit", "originRevision", "revision"}

// ErrNoCommit marks an event that names no Git commit.
var ErrNoCommit = errors.New("event names no commit")

// Commit returns the Git commit e is about. Every revision form Flux
// writes is understood: "main@sha1:<sha>", "sha1:<sha>", "v1.2.3@sha1:<sha>",
// SHA-256 repositories' "@sha256:", the legacy "main/<sha>" and a bare
// hash. The revision of an OCI artifact is its digest, not a commit: the
// origin revision, when the event has one, comes first.
func Commit(e events.Event) (string, error) {
	for _, k := range commitKeys {
		v, ok := e.Metadata[k]
		if !ok || v == "" {
			continue
		}
		sha, err := hashOf(v)
		if err != nil {
			return "", fmt.Errorf("metadata %s: %w", k, err)
		}
		return sha, nil
	}
	return "", fmt.Errorf("%w: no revision metadata", ErrNoCommit)
}

// hashOf extracts the hexadecimal hash of one revision string.
func hashOf(rev string) (string, error) {
	h := rev
	if i := strings.LastIndex(h, "@"); i >= 0 {
		h = h[i+1:]
	}
	if algo, rest, ok := strings.Cut(h, ":"); ok {
		if algo != "sha1" && algo != "sha256" {
			return "", fmt.Errorf("%w: unknown hash algorithm %q", ErrNoCommit, algo)
		}
		h = rest
	} else if i := strings.LastIndex(h, "/"); i >= 0 {
		h = h[i+1:]
	}
	if !isHash(h) {
		return "", fmt.Errorf("%w: no commit hash in revision %q", ErrNoCommit, truncate(rev, 80))
	}
	return strings.ToLower(h), nil
}

// isHash reports whether h is a SHA-1 or SHA-256 object name.
func isHash(h string) bool {
	if len(h) != 40 && len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}
