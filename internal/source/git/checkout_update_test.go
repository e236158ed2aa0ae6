package git

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

func TestPushWithBranchForceAndRefspec(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "base"}})
	srv.Commit(t, "app.git", gitserver.Commit{Branch: "auto", Files: map[string]string{"a.yaml": "stale"}})
	u := srv.HTTPURL("app.git")
	auth := mustAuth(t, u, basicSecret())

	c := mustOpen(t, u, auth, "main")
	mainTip := c.Head()
	hash := mustCommit(t, c, map[string]string{"a.yaml": "updated"})

	// auto diverged from main: without force the push is refused.
	if err := c.PushWith(testContext(t), PushOptions{Branch: "auto"}); !errors.Is(err, ErrNonFastForward) {
		t.Fatalf("PushWith(auto) = %v, want ErrNonFastForward", err)
	}
	if err := c.PushWith(testContext(t), PushOptions{Branch: "auto", Force: true, Refspec: "refs/heads/auto:refs/heads/review"}); err != nil {
		t.Fatalf("PushWith(auto, force, refspec): %v", err)
	}
	for _, branch := range []string{"auto", "review"} {
		got := mustOpen(t, u, auth, branch)
		if got.Head() != hash {
			t.Errorf("%s = %s, want the pushed commit %s", branch, got.Head(), hash)
		}
		if got.Revision() != branch+"@sha1:"+hash {
			t.Errorf("Revision = %s", got.Revision())
		}
	}
	if again := mustOpen(t, u, auth, "main"); again.Head() != mainTip {
		t.Errorf("main moved to %s; only auto and review were pushed", again.Head())
	}
}

func TestPushWithRefusedRefspecs(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "base"}})
	u := srv.HTTPURL("app.git")
	auth := mustAuth(t, u, basicSecret())
	for _, spec := range []string{"+refs/heads/main:refs/heads/x", ":refs/heads/main", "refs/heads/main"} {
		c := mustOpen(t, u, auth, "main")
		mustCommit(t, c, map[string]string{"a.yaml": spec})
		if err := c.PushWith(testContext(t), PushOptions{Refspec: spec}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("refspec %q: %v, want ErrInvalidConfig", spec, err)
		}
	}
}

func TestFilesAndResolveDirStayInside(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "tree.git")
	r := srv.Remote("tree.git")
	pushTree(t, r, "main", map[string]treeFile{
		"deploy/app.yaml":      {mode: filemode.Regular, content: "a"},
		"deploy/sub/more.yml":  {mode: filemode.Regular, content: "b"},
		"deploy/link.yaml":     {mode: filemode.Symlink, content: "../../../etc/passwd"},
		"deploy/inside.yaml":   {mode: filemode.Symlink, content: "app.yaml"},
		"escape":               {mode: filemode.Symlink, content: "../../.."},
		"alias":                {mode: filemode.Symlink, content: "deploy/sub"},
		"other/ignored.yaml":   {mode: filemode.Regular, content: "c"},
		"deploy/notes/x.txt":   {mode: filemode.Regular, content: "d"},
		"deploy/.hidden/h.yml": {mode: filemode.Regular, content: "e"},
	})
	c := mustOpen(t, r.URL, mustAuth(t, r.URL, basicSecret()), "main")

	tests := []struct {
		dir, resolved string
		files         []string
	}{
		{dir: "deploy", resolved: "deploy", files: []string{"deploy/.hidden/h.yml", "deploy/app.yaml", "deploy/notes/x.txt", "deploy/sub/more.yml"}},
		{dir: "./alias", resolved: "deploy/sub", files: []string{"deploy/sub/more.yml"}},
		{dir: "escape", resolved: ".", files: []string{"deploy/.hidden/h.yml", "deploy/app.yaml", "deploy/notes/x.txt", "deploy/sub/more.yml", "other/ignored.yaml"}},
		{dir: "../../deploy", resolved: "deploy", files: []string{"deploy/.hidden/h.yml", "deploy/app.yaml", "deploy/notes/x.txt", "deploy/sub/more.yml"}},
		{dir: "missing", resolved: "missing", files: nil},
	}
	for _, tt := range tests {
		got, err := c.ResolveDir(tt.dir)
		if err != nil || got != tt.resolved {
			t.Errorf("ResolveDir(%q) = %q, %v; want %q", tt.dir, got, err, tt.resolved)
			continue
		}
		files, err := c.Files(got)
		if err != nil || !slices.Equal(files, tt.files) {
			t.Errorf("Files(%q) = %q, %v; want %q", got, files, err, tt.files)
		}
	}
}
