package git

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// localHistory makes a repository with two commits on main, a tag v1 on
// the first (annotated) and a branch feature at the first, and an
// uncommitted change in the work tree. It returns the directory and the
// two commits.
func localHistory(t *testing.T) (dir, first, second string) {
	t.Helper()
	dir = t.TempDir()
	gitserver.InitLocal(t, dir)
	first = gitserver.CommitLocal(t, dir, gitserver.Commit{Tag: "v1", Files: map[string]string{"apps/a.yaml": "one\n", "README": "r\n"}})
	runGit(t, dir, "branch", "feature")
	second = gitserver.CommitLocal(t, dir, gitserver.Commit{Files: map[string]string{"apps/a.yaml": "two\n"}})
	if err := os.WriteFile(filepath.Join(dir, "apps/a.yaml"), []byte("dirty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, first, second
}

func TestLocalRepositoryResolve(t *testing.T) {
	dir, first, second := localHistory(t)
	l, err := OpenLocal(filepath.Join(dir, "apps"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Root() != dir {
		t.Errorf("Root() = %q, want %q", l.Root(), dir)
	}
	if urls := l.RemoteURLs(); len(urls) != 0 {
		t.Errorf("RemoteURLs() = %q before any remote", urls)
	}
	runGit(t, dir, "remote", "add", "origin", "https://example.com/fleet.git")
	if urls := l.RemoteURLs(); len(urls) != 1 || urls[0] != "https://example.com/fleet.git" {
		t.Errorf("RemoteURLs() = %q", urls)
	}
	for _, tc := range []struct {
		rev, want string
	}{
		{"HEAD", second},
		{"main", second},
		{"HEAD~1", first},
		{"main^", first},
		{"v1", first}, // annotated, peeled
		{"feature", first},
		{"refs/heads/feature", first},
		{first, first},
		{first[:8], first},
	} {
		got, err := l.Resolve(tc.rev)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.rev, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Resolve(%q) = %s, want %s", tc.rev, got, tc.want)
		}
	}
	for _, rev := range []string{"nope", "HEAD~5", "v2"} {
		if _, err := l.Resolve(rev); !errors.Is(err, ErrRevisionNotFound) {
			t.Errorf("Resolve(%q) = %v, want ErrRevisionNotFound", rev, err)
		}
	}
}

func TestLocalRepositoryWriteTree(t *testing.T) {
	dir, first, _ := localHistory(t)
	l, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := l.WriteTree(first, dst); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dst, "apps/a.yaml"); got != "one\n" {
		t.Errorf("apps/a.yaml at the first commit = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); !os.IsNotExist(err) {
		t.Errorf(".git written into the tree: %v", err)
	}
	if got := readFile(t, dir, "apps/a.yaml"); got != "dirty\n" {
		t.Errorf("the work tree changed: apps/a.yaml = %q", got)
	}
}
