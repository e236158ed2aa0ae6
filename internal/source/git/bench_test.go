package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// writeSyntheticRepo fills the bare repository gitDir with commits commits
// on main whose tree ends with files files (spread over directories of
// 100), through git fast-import. The first commit adds every file; each
// later one changes 25.
func writeSyntheticRepo(b *testing.B, gitDir string, files, commits int) {
	b.Helper()
	var s bytes.Buffer
	data := func(content string) { fmt.Fprintf(&s, "data %d\n%s\n", len(content), content) }
	path := func(i int) string { return fmt.Sprintf("apps/d%03d/f%04d.yaml", i/100, i) }
	content := func(i, rev int) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  revision: \"%d\"\n  padding: %s\n", i, rev, bytes.Repeat([]byte("x"), 120))
	}
	for c := 1; c <= commits; c++ {
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\ncommitter weir <bench@weir.invalid> %d +0000\n", c, 1735689600+c*60)
		data(fmt.Sprintf("commit %d", c))
		if c > 1 {
			fmt.Fprintf(&s, "from :%d\n", c-1)
		}
		if c == 1 {
			for i := range files {
				fmt.Fprintf(&s, "M 100644 inline %s\n", path(i))
				data(content(i, 1))
			}
			continue
		}
		for k := range 25 {
			i := ((c-2)*25 + k) % files
			fmt.Fprintf(&s, "M 100644 inline %s\n", path(i))
			data(content(i, c))
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Env = append(os.Environ(), "GIT_DIR="+gitDir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = &s
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v: %s", err, out)
	}
}

// BenchmarkCloneShallow compares Clone at depth 1 with `git clone --depth 1`
// of the same 5,000-file, 200-commit repository over the same HTTP server,
// and shows the cost of the Resolve no-op check beside them.
func BenchmarkCloneShallow(b *testing.B) {
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "bench.git")
	writeSyntheticRepo(b, filepath.Join(srv.Dir(), "bench.git"), 5000, 200)
	u := srv.HTTPURL("bench.git")
	ref := Reference{Branch: "main"}
	base := b.TempDir()

	b.Run("weir", func(b *testing.B) {
		remote := NewClient().Remote(context.Background(), u, nil)
		for i := range b.N {
			dir := filepath.Join(base, "weir-"+strconv.Itoa(i))
			if _, err := remote.Clone(dir, CloneOptions{Reference: ref}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	b.Run("git-cli", func(b *testing.B) {
		home := b.TempDir()
		for i := range b.N {
			dir := filepath.Join(base, "cli-"+strconv.Itoa(i))
			cmd := exec.Command("git", "clone", "--quiet", "--depth", "1", "--single-branch", "--branch", "main", "--no-tags", u, dir)
			cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git clone: %v: %s", err, out)
			}
			b.StopTimer()
			_ = os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	b.Run("weir-resolve", func(b *testing.B) {
		remote := NewClient().Remote(context.Background(), u, nil)
		for range b.N {
			if _, err := remote.Resolve(ref); err != nil {
				b.Fatal(err)
			}
		}
	})
}
