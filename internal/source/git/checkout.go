package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

var (
	// ErrNoStagedFiles means Commit found the tree unchanged; bootstrap
	// reads it as "already up to date".
	ErrNoStagedFiles = errors.New("no changes to commit")
	// ErrNonFastForward means Push was refused because the remote branch
	// moved since OpenBranch: open the branch again, reapply the change and
	// push again. Push never forces.
	ErrNonFastForward = errors.New("remote branch moved since it was checked out")
)

// Checkout is one branch of a repository held in memory, writable: the
// history in a go-git memory store, the files in an in-memory worktree.
// Nothing touches the disk. It is not safe for concurrent use.
type Checkout struct {
	auth   *Auth
	branch plumbing.ReferenceName
	repo   *gogit.Repository
	wt     *gogit.Worktree
	// written are the paths WriteFile touched since the last Commit: the
	// only changes a worktree that nothing else writes can have.
	written map[string]struct{}
}

// OpenBranch clones the whole history of branch (that branch only, no
// tags) of repoURL into memory. auth nil means anonymous HTTP(S). ctx
// bounds the clone (connection, negotiation and download).
//
// An empty repository, or one without that branch, gives an empty
// Checkout: its first Commit has no parent and Push creates the branch.
func OpenBranch(ctx context.Context, repoURL string, auth *Auth, branch string) (*Checkout, error) {
	name := plumbing.NewBranchReferenceName(branch)
	if branch == "" || strings.HasPrefix(branch, "refs/") || name.Validate() != nil {
		return nil, invalidf("branch name %q is not valid", branch)
	}
	r, err := newRemote(ctx, repoURL, auth)
	if err != nil {
		return nil, err
	}
	s, err := r.begin()
	if err != nil {
		return nil, err
	}
	defer s.release()
	o, err := r.optionsFor(s, r.auth.endpoint())
	if err != nil {
		return nil, err
	}

	repo, err := gogit.InitWithOptions(memory.NewStorage(), memfs.New(), gogit.InitOptions{DefaultBranch: name})
	if err != nil {
		return nil, fmt.Errorf("initialise in-memory repository: %w", err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.auth.endpoint()}}); err != nil {
		return nil, fmt.Errorf("add remote: %w", err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("in-memory worktree: %w", err)
	}
	c := &Checkout{auth: r.auth, branch: name, repo: repo, wt: wt, written: map[string]struct{}{}}
	if err := c.load(r, o); err != nil {
		return nil, fmt.Errorf("open branch %s of %s: %w", branch, r.auth.describe(), err)
	}
	return c, nil
}

// load fetches the branch's history and checks its tip out; it leaves the
// Checkout empty when the remote has no such branch (or nothing at all).
func (c *Checkout) load(r *remote, o transportOptions) error {
	tracking := plumbing.NewRemoteReferenceName("origin", c.branch.Short())
	spec := config.RefSpec("+" + string(c.branch) + ":" + string(tracking))
	err := r.fetch(c.repo, o, []config.RefSpec{spec}, 0, string(c.branch))
	switch {
	case errors.Is(err, ErrRefNotFound):
		return nil // empty repository, or no such branch yet
	case err != nil:
		return err
	}
	ref, err := c.repo.Storer.Reference(tracking)
	if err != nil {
		return fmt.Errorf("read fetched branch: %w", err)
	}
	// HEAD already names the branch; go-git's Reset needs it born, then
	// fills the index and the worktree.
	if err := c.repo.Storer.SetReference(plumbing.NewHashReference(c.branch, ref.Hash())); err != nil {
		return fmt.Errorf("create local branch: %w", err)
	}
	if err := c.wt.Reset(&gogit.ResetOptions{Commit: ref.Hash(), Mode: gogit.HardReset}); err != nil {
		return fmt.Errorf("check out %s: %w", ref.Hash(), err)
	}
	return nil
}

// newRemote is the remote that Client.Remote would return, as the
// concrete type, with its configuration error if any.
func newRemote(ctx context.Context, repoURL string, auth *Auth) (*remote, error) {
	r := goGitClient{}.Remote(ctx, repoURL, auth).(*remote)
	return r, r.err
}

// Head returns the commit the local branch points at (40 hex digits): the
// fetched tip, or the last Commit. It is empty for an empty Checkout.
func (c *Checkout) Head() string {
	ref, err := c.repo.Storer.Reference(c.branch)
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// ReadFile returns the content of the file at p (slash-separated, relative
// to the repository root); the error matches fs.ErrNotExist when there is
// none.
func (c *Checkout) ReadFile(p string) ([]byte, error) {
	clean, err := checkoutPath(p, false)
	if err != nil {
		return nil, err
	}
	b, err := util.ReadFile(c.wt.Filesystem, clean)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", clean, err)
	}
	return b, nil
}

// WriteFile writes data to the file at p, creating its directories.
func (c *Checkout) WriteFile(p string, data []byte) error {
	clean, err := checkoutPath(p, false)
	if err != nil {
		return err
	}
	if dir := path.Dir(clean); dir != "." {
		if err := c.wt.Filesystem.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if err := util.WriteFile(c.wt.Filesystem, clean, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", clean, err)
	}
	c.written[clean] = struct{}{}
	return nil
}

// ListDir returns the names of the regular files directly in directory p
// ("" or "." for the root), sorted; none when p does not exist.
func (c *Checkout) ListDir(p string) ([]string, error) {
	clean, err := checkoutPath(p, true)
	if err != nil {
		return nil, err
	}
	entries, err := c.wt.Filesystem.ReadDir(clean)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", clean, err)
	}
	var names []string
	for _, e := range entries {
		if e.Mode().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// Commit stages every file WriteFile added or modified and commits it on
// the branch, with author as author and committer (author.When, or now
// when zero; the name or the e-mail may be empty, not both: an
// automation's author name is optional), signed by signer unless it is nil. It returns the new
// commit's hash (40 hex digits), or ErrNoStagedFiles when the tree equals
// the branch tip's.
//
// Written files are staged even when .gitignore matches them (as `git add
// -f` would): the caller asked for them, and go-git's "add all" would
// silently leave them out, turning a real change into ErrNoStagedFiles.
func (c *Checkout) Commit(message string, author Signature, signer Signer) (string, error) {
	if author.Name == "" && author.Email == "" {
		return "", invalidf("commit author needs a name or an e-mail")
	}
	for _, p := range slices.Sorted(maps.Keys(c.written)) {
		// SkipStatus: hash and stage just this file, without go-git
		// computing the status of the whole worktree for every path.
		if err := c.wt.AddWithOptions(&gogit.AddOptions{Path: p, SkipStatus: true}); err != nil {
			return "", fmt.Errorf("stage %s: %w", p, err)
		}
	}
	clear(c.written)
	when := author.When
	if when.IsZero() {
		when = time.Now()
	}
	sig := &object.Signature{Name: author.Name, Email: author.Email, When: when}
	opts := &gogit.CommitOptions{Author: sig, Committer: sig}
	if signer != nil {
		opts.Signer = signer
	}
	h, err := c.wt.Commit(message, opts)
	switch {
	case errors.Is(err, gogit.ErrEmptyCommit):
		return "", ErrNoStagedFiles
	case err != nil:
		return "", fmt.Errorf("commit on %s: %w", c.branch.Short(), err)
	}
	return h.String(), nil
}

// Push sends the branch to the remote's branch of the same name, never
// forcing. It returns nil when the remote is already there, and an error
// matching ErrNonFastForward when the remote branch moved since
// OpenBranch (or was created since an empty Checkout was opened). ctx
// bounds the push.
func (c *Checkout) Push(ctx context.Context) error {
	return c.PushWith(ctx, PushOptions{})
}

// isNonFastForward recognises the refusals of a push that would lose
// remote commits. go-git checks before sending ("non-fast-forward update",
// an unexported error); git receive-pack reports "non-fast-forward" or
// "fetch first" when it checks ancestry, and "failed to update ref" when
// the branch moved between its advertisement and the update (the
// old-value check of its ref transaction).
func isNonFastForward(err error) bool {
	msg := err.Error()
	for _, s := range []string{"non-fast-forward", "fetch first", "failed to update ref"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// checkoutPath cleans a slash-separated path relative to the repository
// root. Absolute paths, paths leaving the root and paths git refuses
// (".git" in any case, backslashes) are refused; root allows "" and "."
// for the root itself.
func checkoutPath(p string, root bool) (string, error) {
	clean := path.Clean(p)
	if root && (p == "" || clean == ".") {
		return ".", nil
	}
	if p == "" || strings.HasPrefix(p, "/") || !filepath.IsLocal(filepath.FromSlash(clean)) || clean == "." {
		return "", invalidf("path %q is not a relative path inside the repository", p)
	}
	if validTreePath(clean) != nil {
		return "", invalidf("path %q names .git or holds a backslash or NUL, which git refuses", p)
	}
	return clean, nil
}
