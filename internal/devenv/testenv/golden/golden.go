// Package golden compares test output with files under testdata/, and
// rewrites them when the tests run with -update. Every test package that
// keeps golden files uses it, so the flag is registered once per test
// binary and means the same everywhere.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ instead of comparing with them")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Assert compares got with the file at path, or writes got there (creating
// directories) with -update. A difference is reported as a diff.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (-want +got; -update rewrites it):\n%s", path, cmp.Diff(string(want), string(got)))
	}
}
