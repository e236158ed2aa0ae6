package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"

	"github.com/weir-gitops/weir/internal/fleet"
)

// realTempDir is t.TempDir with its symlinks resolved, as WorkTreeRoot
// answers; the test is skipped when it lies in a Git work tree already.
func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if root, err := fleet.WorkTreeRoot(dir); err != nil || root != "" {
		t.Skipf("the temporary directory lies in the Git work tree %q (%v)", root, err)
	}
	return dir
}

// linkedWorkTree makes wt a linked work tree of the repository at main,
// as `git worktree add` lays it out: a .git file naming its directory
// under main's .git/worktrees, whose commondir leads back to main's .git.
func linkedWorkTree(t *testing.T, main, wt string) {
	t.Helper()
	gitDir := filepath.Join(main, ".git", "worktrees", filepath.Base(wt))
	files := map[string]string{
		filepath.Join(wt, ".git"):          "gitdir: " + gitDir + "\n",
		filepath.Join(gitDir, "commondir"): "../..\n",
		filepath.Join(gitDir, "HEAD"):      "ref: refs/heads/" + filepath.Base(wt) + "\n",
		filepath.Join(gitDir, "gitdir"):    filepath.Join(wt, ".git") + "\n",
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWorkTreeRoot(t *testing.T) {
	tmp := realTempDir(t)
	mkdir := func(p string) string {
		full := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		return full
	}
	if _, err := git.PlainInit(mkdir("repo"), false); err != nil {
		t.Fatal(err)
	}
	mkdir("repo/clusters/staging")
	linkedWorkTree(t, filepath.Join(tmp, "repo"), mkdir("wt"))
	mkdir("wt/clusters/staging")
	// A submodule's work tree holds a .git file too.
	mkdir("repo/vendor/fleet/clusters")
	if err := os.WriteFile(filepath.Join(tmp, "repo/vendor/fleet/.git"), []byte("gitdir: ../../.git/modules/fleet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir("plain/clusters")
	if err := os.Symlink(filepath.Join(tmp, "repo/clusters"), filepath.Join(tmp, "plain/link")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, dir, want string
	}{
		{"the root of a work tree", "repo", "repo"},
		{"a directory inside one", "repo/clusters/staging", "repo"},
		{"a linked work tree: .git is a file", "wt/clusters/staging", "wt"},
		{"a submodule: the nearest .git wins", "repo/vendor/fleet/clusters", "repo/vendor/fleet"},
		{"a symlink into a work tree: where the files are", "plain/link", "repo"},
		{"no work tree", "plain/clusters", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fleet.WorkTreeRoot(filepath.Join(tmp, filepath.FromSlash(tt.dir)))
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tt.want != "" {
				want = filepath.Join(tmp, filepath.FromSlash(tt.want))
			}
			if got != want {
				t.Errorf("WorkTreeRoot = %q, want %q", got, want)
			}
		})
	}
	if _, err := fleet.WorkTreeRoot(filepath.Join(tmp, "nope")); err == nil {
		t.Error("no error for a directory that does not exist")
	}
}

// TestLoadGitRemoteOfLinkedWorkTree: a linked work tree's remotes are in
// its repository's common directory; a GitRepository naming one is local.
func TestLoadGitRemoteOfLinkedWorkTree(t *testing.T) {
	tmp := realTempDir(t)
	main := filepath.Join(tmp, "main")
	repo, err := git.PlainInit(main, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{"https://example.com/org/fleet"}}); err != nil {
		t.Fatal(err)
	}
	files := withFile("clusters/dev/sync.yaml", strings.Replace(fleetRepo["clusters/dev/sync.yaml"], "name: flux-system}}", "name: bootstrap}}", 1))
	wt := filepath.Join(tmp, "wt")
	if err := os.CopyFS(wt, os.DirFS(writeTree(t, files))); err != nil {
		t.Fatal(err)
	}
	linkedWorkTree(t, main, wt)
	g, err := fleet.Load(context.Background(), fleet.Options{Dir: wt, Paths: []string{"clusters/dev"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Clusters[0].Node("Kustomization", "flux-system", "platform"); !n.Built {
		t.Error("platform not built: the GitRepository's URL is the remote of the work tree's repository")
	}
}
