package commitstatus

import (
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
)

// repoAddress is a Provider address split as Flux splits it (githost):
// the host's origin and the repository's path.
type repoAddress struct {
	origin, path string
}

// parseAddress reads the HTTPS, SSH or scp-like address of a repository.
func parseAddress(addr string) (repoAddress, error) {
	r, err := githost.ParseAddress(addr)
	return repoAddress{origin: r.Origin, path: r.Path}, err
}

// ownerRepo splits the path into exactly two segments.
func (a repoAddress) ownerRepo(kind string) (string, string, error) {
	return githost.Repo{Origin: a.origin, Path: a.path}.OwnerRepo(kind)
}

// requireToken fails unless o carries the Secret's token.
func requireToken(o notifier.Options) error { return githost.RequireToken(o) }

// CheckAddress reports whether address names a repository the type's
// host can set statuses on: the check New makes, without credentials, for
// `weir create alert-provider`.
func CheckAddress(kind, address string) error {
	_, err := New(notifier.Options{Type: kind, Address: address, Token: "check:check", CommitStatus: "check"})
	return err
}
