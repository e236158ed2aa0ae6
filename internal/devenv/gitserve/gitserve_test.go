package gitserve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCloneAndPush serves an empty repository, pushes a commit to it with
// the git command line, clones it back, and checks that OnPush saw the push.
func TestCloneAndPush(t *testing.T) {
	root := t.TempDir()
	if err := InitBare(root, "org/app.git"); err != nil {
		t.Fatal(err)
	}
	pushes := make(chan string, 1)
	srv, err := Start(Options{Root: root, OnPush: func(repo string) { pushes <- repo }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := srv.URL("org/app.git")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %s is not on 127.0.0.1", url)
	}

	work := t.TempDir()
	env := append(Env(t.TempDir()),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(work, "init", "--quiet", "--initial-branch=main")
	if err := os.WriteFile(filepath.Join(work, "a.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(work, "add", "a.yaml")
	run(work, "commit", "--quiet", "-m", "first")
	run(work, "push", "--quiet", url, "main")
	select {
	case repo := <-pushes:
		if repo != "org/app.git" {
			t.Errorf("OnPush got %q, want org/app.git", repo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnPush was not called")
	}

	clone := filepath.Join(t.TempDir(), "clone")
	run(filepath.Dir(clone), "clone", "--quiet", url, clone)
	if got, want := run(clone, "rev-parse", "HEAD"), run(work, "rev-parse", "HEAD"); got != want {
		t.Errorf("cloned HEAD %s, pushed %s", got, want)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestInitBareRefusesEscapes(t *testing.T) {
	if err := InitBare(t.TempDir(), "../outside.git"); err == nil {
		t.Fatal("InitBare accepted a path outside the root")
	}
}
