package gitserver

import (
	"os"
	"path/filepath"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// InitLocal makes dir a repository with a work tree, on branch main, for
// tests of tools that read a local checkout (`weir diff --base`).
func InitLocal(t testing.TB, dir string) {
	t.Helper()
	_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// CommitLocal writes c's files into the work tree of the repository in
// dir, removes c.Delete, stages every change of the work tree (files
// written there beforehand too) and commits on the checked-out branch
// (c.Branch is ignored) with the helpers' fixed signature, tags the commit when c.Tag
// is set (annotated), and returns its SHA.
func CommitLocal(t testing.TB, dir string, c Commit) string {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range c.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range c.Delete {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	// One pass over the work tree: adding files one by one rewrites the
	// index each time, which is quadratic on a generated fleet.
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := signature
	msg := c.Message
	if msg == "" {
		msg = "commit"
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: &sig, Committer: &sig, AllowEmptyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tag != "" {
		if _, err := repo.CreateTag(c.Tag, h, &git.CreateTagOptions{Tagger: &sig, Message: c.Tag}); err != nil {
			t.Fatal(err)
		}
	}
	return h.String()
}
