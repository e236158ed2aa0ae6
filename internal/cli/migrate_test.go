package cli_test

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// readFiles returns the files below dir by slash-separated relative path.
func readFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// copyTree copies testdata/<src> into a new temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range readFiles(t, filepath.Join("testdata", src)) {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// assertTreeEqual fails unless dir holds exactly the files of want.
func assertTreeEqual(t *testing.T, dir string, want map[string][]byte) {
	t.Helper()
	got := readFiles(t, dir)
	if !maps.EqualFunc(got, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		for _, rel := range slices.Sorted(maps.Keys(want)) {
			if string(got[rel]) != string(want[rel]) {
				t.Errorf("%s changed:\n%s", rel, got[rel])
			}
		}
	}
}

// TestMigrateFiles runs `weir migrate -f` over a copy of a repository
// (testdata/migrate/before): apiVersion lines of Flux kinds move to the
// versions weir's CRDs store, in either key order, in list items, with
// quotes, comments and CRLF line ends kept; non-Flux objects, files at the
// latest versions and files of other extensions stay byte for byte;
// --dry-run and a refused prompt change nothing; the result is compared
// with testdata/migrate/after, file by file.
func TestMigrateFiles(t *testing.T) {
	before := readFiles(t, filepath.Join("testdata", "migrate", "before"))
	dir := copyTree(t, filepath.Join("migrate", "before"))
	run := func(t *testing.T, stdin, golden string, code int, args ...string) {
		t.Helper()
		res := weirIO(context.Background(), t, stdin, nil, append([]string{"migrate"}, args...)...)
		if res.Code != code {
			t.Errorf("exit code %d, want %d; stderr:\n%s", res.Code, code, res.Stderr)
		}
		assertGolden(t, golden, strings.ReplaceAll(res.Output(), dir, "REPO"))
	}

	t.Run("dry run", func(t *testing.T) {
		run(t, "", "migrate/dry-run.golden", 0, "-f", dir, "--dry-run")
		assertTreeEqual(t, dir, before)
	})
	t.Run("refused", func(t *testing.T) {
		run(t, "n\n", "migrate/refused.golden", 1, "-f", dir)
		assertTreeEqual(t, dir, before)
	})
	t.Run("unsupported version", func(t *testing.T) {
		run(t, "", "migrate/bad-version.golden", 1, "-f", dir, "--version", "2.5")
		assertTreeEqual(t, dir, before)
	})
	t.Run("single file, other extension", func(t *testing.T) {
		run(t, "", "migrate/wrong-extension.golden", 1, "-f", filepath.Join(dir, "charts", "app", "templates", "automation.tpl"))
	})
	t.Run("yes", func(t *testing.T) {
		run(t, "", "migrate/yes.golden", 0, "-f", dir+"/", "--yes")
		after := readFiles(t, dir)
		for _, rel := range slices.Sorted(maps.Keys(after)) {
			golden.Assert(t, filepath.Join("testdata", "migrate", "after", filepath.FromSlash(rel)), after[rel])
		}
		for _, rel := range []string{"infrastructure/current.yaml", "apps/podinfo/README.md", "charts/app/templates/automation.tpl"} {
			if string(after[rel]) != string(before[rel]) {
				t.Errorf("%s changed:\n%s", rel, after[rel])
			}
		}
		info, err := os.Stat(filepath.Join(dir, "clusters", "staging", "sync.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o640 {
			t.Errorf("permissions %v, want the file's own 0640", info.Mode().Perm())
		}
	})
	t.Run("again", func(t *testing.T) {
		run(t, "", "migrate/nothing.golden", 0, "-f", dir)
	})
	t.Run("template extension", func(t *testing.T) {
		run(t, "y\n", "migrate/template.golden", 0, "-f", filepath.Join(dir, "charts"), "--extensions", ".tpl")
	})
}
