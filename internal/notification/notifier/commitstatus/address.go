package commitstatus

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// repoAddress is a Provider address split as Flux splits it: the host's
// origin and the repository's path.
type repoAddress struct {
	// origin is "https://host[:port]"; SSH addresses become https.
	origin string
	// path is the repository's path without slashes around it or ".git".
	path string
}

// parseAddress reads the HTTPS, SSH or scp-like ("git@host:owner/repo")
// address of a repository.
func parseAddress(addr string) (repoAddress, error) {
	addr = strings.TrimSpace(addr)
	if !strings.Contains(addr, "://") {
		// scp-like: [user@]host:path
		if at, colon := strings.Index(addr, "@"), strings.Index(addr, ":"); colon > 0 && (at < 0 || at < colon) {
			addr = "ssh://" + addr[:colon] + "/" + strings.TrimPrefix(addr[colon+1:], "/")
		}
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return repoAddress{}, fmt.Errorf("%w: address is not a repository URL", notifier.ErrInvalidConfig)
	}
	scheme := u.Scheme
	switch scheme {
	case "ssh":
		scheme = "https"
	case "http", "https":
	default:
		return repoAddress{}, fmt.Errorf("%w: address scheme %q is not https, http or ssh", notifier.ErrInvalidConfig, u.Scheme)
	}
	host := u.Host
	if u.Scheme == "ssh" {
		// An SSH port says nothing about the API's.
		host = u.Hostname()
	}
	p := strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	return repoAddress{origin: scheme + "://" + host, path: p}, nil
}

// ownerRepo splits the path into exactly two segments.
func (a repoAddress) ownerRepo(kind string) (string, string, error) {
	owner, repo, ok := strings.Cut(a.path, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return "", "", fmt.Errorf("%w: %s address needs the repository as <owner>/<repo>, got %q",
			notifier.ErrInvalidConfig, kind, a.path)
	}
	return owner, repo, nil
}

// requireToken fails unless o carries the Secret's token.
func requireToken(o notifier.Options) error {
	if o.Token == "" {
		return fmt.Errorf("%w: %s provider needs the token key in its secret", notifier.ErrInvalidConfig, o.Type)
	}
	return nil
}

// ownerRepoOf parses o's address as an <owner>/<repo> repository, after
// checking o has a token.
func ownerRepoOf(o notifier.Options) (a repoAddress, owner, repo string, err error) {
	if err = requireToken(o); err != nil {
		return a, "", "", err
	}
	if a, err = parseAddress(o.Address); err != nil {
		return a, "", "", err
	}
	owner, repo, err = a.ownerRepo(o.Type)
	return a, owner, repo, err
}

// CheckAddress reports whether address names a repository the type's
// host can set statuses on: the check New makes, without credentials, for
// `weir create alert-provider`.
func CheckAddress(kind, address string) error {
	_, err := New(notifier.Options{Type: kind, Address: address, Token: "check:check", CommitStatus: "check"})
	return err
}
