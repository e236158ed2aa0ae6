package githost

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// Repo is a Provider address split as Flux splits it: the host's origin
// and the repository's path.
type Repo struct {
	// Origin is "https://host[:port]"; SSH addresses become https.
	Origin string
	// Path is the repository's path without slashes around it or ".git".
	Path string
}

// ParseAddress reads the HTTPS, SSH or scp-like ("git@host:owner/repo")
// address of a repository.
func ParseAddress(addr string) (Repo, error) {
	addr = strings.TrimSpace(addr)
	if !strings.Contains(addr, "://") {
		// scp-like: [user@]host:path
		if at, colon := strings.Index(addr, "@"), strings.Index(addr, ":"); colon > 0 && (at < 0 || at < colon) {
			addr = "ssh://" + addr[:colon] + "/" + strings.TrimPrefix(addr[colon+1:], "/")
		}
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return Repo{}, fmt.Errorf("%w: address is not a repository URL", notifier.ErrInvalidConfig)
	}
	scheme := u.Scheme
	switch scheme {
	case "ssh":
		scheme = "https"
	case "http", "https":
	default:
		return Repo{}, fmt.Errorf("%w: address scheme %q is not https, http or ssh", notifier.ErrInvalidConfig, u.Scheme)
	}
	host := u.Host
	if u.Scheme == "ssh" {
		// An SSH port says nothing about the API's.
		host = u.Hostname()
	}
	p := strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	return Repo{Origin: scheme + "://" + host, Path: p}, nil
}

// OwnerRepo splits the path into exactly two segments; kind names the
// Provider type in the error.
func (a Repo) OwnerRepo(kind string) (string, string, error) {
	owner, repo, ok := strings.Cut(a.Path, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return "", "", fmt.Errorf("%w: %s address needs the repository as <owner>/<repo>, got %q",
			notifier.ErrInvalidConfig, kind, a.Path)
	}
	return owner, repo, nil
}

// RequireToken fails unless o carries the Secret's token.
func RequireToken(o notifier.Options) error {
	if o.Token == "" {
		return fmt.Errorf("%w: %s provider needs the token key in its secret", notifier.ErrInvalidConfig, o.Type)
	}
	return nil
}

// ownerRepoOf parses o's address as an <owner>/<repo> repository.
func ownerRepoOf(o notifier.Options) (a Repo, owner, repo string, err error) {
	if a, err = ParseAddress(o.Address); err != nil {
		return a, "", "", err
	}
	owner, repo, err = a.OwnerRepo(o.Type)
	return a, owner, repo, err
}
