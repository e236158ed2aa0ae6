package kustomize

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	goldenfile "github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// writeTree creates files (slash paths → content) below dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newRoot returns a fresh source root holding files.
func newRoot(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	return root
}

func mustBuild(t testing.TB, opts BuildOptions) *Result {
	t.Helper()
	res, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return res
}

func mustYAML(t testing.TB, res *Result) []byte {
	t.Helper()
	y, err := ToYAML(res.Objects)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", "golden", name), got)
}
