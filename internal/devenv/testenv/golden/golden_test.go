package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestAssert(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		path       string
		got        string
		wantFailed bool
	}{
		{"equal", path, "same\n", false},
		{"different", path, "other\n", true},
		{"missing file", filepath.Join(dir, "missing.golden"), "x", true},
	}
	for _, tt := range tests {
		r := &recorder{TB: t}
		Assert(r, tt.path, []byte(tt.got))
		if r.failed != tt.wantFailed {
			t.Errorf("%s: failed = %v, want %v", tt.name, r.failed, tt.wantFailed)
		}
	}
}
