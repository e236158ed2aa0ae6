package git

import (
	"errors"
	"fmt"
	"io"
	"os"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// ErrRevisionNotFound is wrapped by LocalRepository.Resolve when the
// revision names nothing in the repository.
var ErrRevisionNotFound = errors.New("revision not found")

// LocalRepository is a Git repository on the local disk, read without
// touching its work tree or index: for `weir diff --base`, which renders
// the repository as it was at another revision.
type LocalRepository struct {
	repo *gogit.Repository
	root string
}

// OpenLocal opens the repository holding dir (dir itself or a parent, a
// linked work tree too).
func OpenLocal(dir string) (*LocalRepository, error) {
	repo, err := gogit.PlainOpenWithOptions(dir, &gogit.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("opening the Git repository of %s: %w", dir, err)
	}
	out := &LocalRepository{repo: repo}
	if wt, err := repo.Worktree(); err == nil {
		out.root = wt.Filesystem.Root()
	}
	return out, nil
}

// Root is the repository's work tree directory; empty for a bare one.
func (l *LocalRepository) Root() string { return l.root }

// Resolve turns a revision as git understands it (branch, tag, full or
// abbreviated commit, HEAD~1, main^2…) into the commit's hex name;
// annotated tags are peeled to their commit.
func (l *LocalRepository) Resolve(rev string) (string, error) {
	h, err := l.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		// go-git answers io.EOF for HEAD~n past the first commit.
		if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%w: %q", ErrRevisionNotFound, rev)
		}
		return "", fmt.Errorf("resolving revision %q: %w", rev, err)
	}
	return h.String(), nil
}

// WriteTree writes the tree of commit (a hex name from Resolve) into dst,
// an empty directory, with the same guards as a clone (see writeTree):
// the repository's work tree and index are left as they are.
func (l *LocalRepository) WriteTree(commit, dst string) error {
	c, err := l.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return fmt.Errorf("reading commit %s: %w", commit, err)
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dst, err)
	}
	defer root.Close()
	return writeTree(root, l.repo.Storer, c, nil)
}

// RemoteURLs are the URLs of the repository's remotes: a GitRepository
// naming one of them stands for this repository.
func (l *LocalRepository) RemoteURLs() []string {
	remotes, err := l.repo.Remotes()
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range remotes {
		out = append(out, r.Config().URLs...)
	}
	return out
}
