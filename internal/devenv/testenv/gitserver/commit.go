package gitserver

import (
	"cmp"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
)

// commitTime is the author and committer date of every helper commit, so
// that the same commits give the same SHAs on every run.
var commitTime = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// signature is the author, committer and tagger of every helper commit.
var signature = object.Signature{Name: "weir test", Email: "test@weir.invalid", When: commitTime}

// Commit is one commit written by Push or Server.Commit.
type Commit struct {
	// Branch to commit on, created if missing; "main" when empty.
	Branch string
	// Files maps slash-separated paths to contents. They are laid over the
	// branch's current tree: files not named here stay as they were.
	Files map[string]string
	// Delete lists slash-separated paths removed in this commit.
	Delete []string
	// Message is the commit message; "commit" when empty.
	Message string
	// Tag, when set, is an annotated tag pushed along with the commit.
	Tag string
}

// Remote is a repository that Push reaches over the network.
type Remote struct {
	URL string
	// Auth is a go-git auth method: http.BasicAuth, http.TokenAuth, ssh.PublicKeys…
	Auth transport.AuthMethod
	// CABundle is extra PEM certificates to trust for HTTPS.
	CABundle []byte
}

// Commit writes c to repo over HTTP with the server's own credentials and
// returns the commit SHA.
func (s *Server) Commit(t testing.TB, repo string, c Commit) string {
	t.Helper()
	return Push(t, s.Remote(repo), c)
}

// Push fetches the remote into memory, commits c on top of its branch, pushes
// the branch (and tag), and returns the commit SHA.
func Push(t testing.TB, r Remote, c Commit) string {
	t.Helper()
	sha, err := push(r, c)
	if err != nil {
		t.Fatalf("push to %s: %v", r.URL, err)
	}
	return sha
}

func push(r Remote, c Commit) (string, error) {
	branch := plumbing.NewBranchReferenceName(cmp.Or(c.Branch, "main"))
	repo, err := git.InitWithOptions(memory.NewStorage(), memfs.New(), git.InitOptions{DefaultBranch: branch})
	if err != nil {
		return "", fmt.Errorf("init in-memory repository: %w", err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.URL}}); err != nil {
		return "", fmt.Errorf("add remote: %w", err)
	}
	err = repo.Fetch(&git.FetchOptions{
		RefSpecs: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"},
		Auth:     r.Auth,
		CABundle: r.CABundle,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return "", fmt.Errorf("fetch: %w", err)
	}

	wt, err := repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("worktree: %w", err)
	}
	if ref, err := repo.Reference(plumbing.NewRemoteReferenceName("origin", branch.Short()), true); err == nil {
		if err := wt.Checkout(&git.CheckoutOptions{Hash: ref.Hash(), Branch: branch, Create: true}); err != nil {
			return "", fmt.Errorf("check out %s: %w", branch.Short(), err)
		}
	}
	for path, content := range c.Files {
		if err := util.WriteFile(wt.Filesystem, path, []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
	}
	for _, path := range c.Delete {
		if _, err := wt.Remove(path); err != nil {
			return "", fmt.Errorf("remove %s: %w", path, err)
		}
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return "", fmt.Errorf("stage files: %w", err)
	}
	sig := signature
	hash, err := wt.Commit(cmp.Or(c.Message, "commit"), &git.CommitOptions{
		Author: &sig, Committer: &sig, AllowEmptyCommits: true,
	})
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}

	specs := []config.RefSpec{config.RefSpec(branch + ":" + branch)}
	if c.Tag != "" {
		if _, err := repo.CreateTag(c.Tag, hash, &git.CreateTagOptions{Tagger: &sig, Message: c.Tag}); err != nil {
			return "", fmt.Errorf("tag %s: %w", c.Tag, err)
		}
		tag := plumbing.NewTagReferenceName(c.Tag)
		specs = append(specs, config.RefSpec(tag+":"+tag))
	}
	err = repo.Push(&git.PushOptions{RemoteName: "origin", RefSpecs: specs, Auth: r.Auth, CABundle: r.CABundle})
	if err != nil {
		return "", fmt.Errorf("push: %w", err)
	}
	return hash.String(), nil
}
