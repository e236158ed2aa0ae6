package bootstrap

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// assertGolden compares got with testdata/name, or rewrites it with -update.
func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", name), got)
}

// recordingLogger is a Logger that keeps every line, prefixed with its
// level, so that tests can assert what the user was told.
type recordingLogger struct {
	lines []string
}

var _ Logger = (*recordingLogger)(nil)

func (l *recordingLogger) add(level, format string, args ...any) {
	l.lines = append(l.lines, level+" "+fmt.Sprintf(format, args...))
}

func (l *recordingLogger) Generatef(format string, args ...any) { l.add("generate", format, args...) }
func (l *recordingLogger) Actionf(format string, args ...any)   { l.add("action", format, args...) }
func (l *recordingLogger) Waitingf(format string, args ...any)  { l.add("waiting", format, args...) }
func (l *recordingLogger) Successf(format string, args ...any)  { l.add("success", format, args...) }
func (l *recordingLogger) Warningf(format string, args ...any)  { l.add("warning", format, args...) }

// String is the whole log, one line per call.
func (l *recordingLogger) String() string { return strings.Join(l.lines, "\n") }

// wantErr checks err against a wanted substring: "" means no error.
func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("expected an error containing %q, got none", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
