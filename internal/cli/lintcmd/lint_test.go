package lintcmd_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/lintcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

const fixtures = "../../fleet/lint/testdata/fixtures"

// run runs `weir lint` with args and returns stdout and the exit code.
func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	cmd := lintcmd.NewCommand(streams, nil)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	var exit *output.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		if exit.Err != nil {
			out.WriteString("error: " + exit.Err.Error() + "\n")
		}
		return out.String(), exit.Code
	}
	t.Fatalf("weir lint %v: %v", args, err)
	return "", 0
}

// TestOutputFormats prints seed 003's findings (two clusters sharing a
// base) in every format, and its fixed graph in every graph format.
func TestOutputFormats(t *testing.T) {
	before := filepath.Join(fixtures, "seed-003/before")
	after := filepath.Join(fixtures, "seed-003/after")
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"text", []string{before}, 1},
		{"json", []string{before, "-o", "json"}, 1},
		{"sarif", []string{before, "-o", "sarif"}, 1},
		{"github", []string{before, "-o", "github"}, 1},
		{"markdown", []string{before, "-o", "markdown"}, 1},
		{"markdown-clean", []string{after, "-o", "markdown"}, 0},
		{"graph-dot", []string{after, "--graph"}, 0},
		{"graph-mermaid", []string{after, "--graph", "-o", "mermaid"}, 0},
		{"graph-json", []string{after, "--graph", "-o", "json", "--path", "clusters/dev"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, code := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			golden.Assert(t, filepath.Join("testdata", tt.name+".golden"), []byte(out))
		})
	}
}

// TestExitStatus: 0 without errors (warnings and infos do not count), 1
// with errors, 2 when the repository cannot be analysed.
func TestExitStatus(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"clean", []string{filepath.Join(fixtures, "health-gate/near-miss")}, 0},
		{"info only", []string{filepath.Join(fixtures, "health-gate/trigger")}, 0},
		{"error", []string{filepath.Join(fixtures, "dangling-dependency/trigger")}, 1},
		{"remote base is info by default", []string{filepath.Join(fixtures, "remote-base/trigger")}, 0},
		{"remote base is an error under --no-remote-bases", []string{filepath.Join(fixtures, "remote-base/trigger"), "--no-remote-bases"}, 1},
		{"cross-namespace only under the flag", []string{filepath.Join(fixtures, "cross-namespace-ref/trigger")}, 0},
		{"no such directory", []string{filepath.Join(fixtures, "nope")}, 2},
		{"no such entry point", []string{filepath.Join(fixtures, "health-gate/trigger"), "--path", "clusters/nope"}, 2},
		{"bad format", []string{filepath.Join(fixtures, "health-gate/trigger"), "-o", "yaml"}, 2},
		{"bad --source", []string{filepath.Join(fixtures, "health-gate/trigger"), "--source", "x"}, 2},
		{"missing key file", []string{filepath.Join(fixtures, "health-gate/trigger"), "--decrypt-key", "nope.agekey"}, 2},
		{"decrypt key", []string{filepath.Join(fixtures, "seed-003/after"), "--decrypt-key", "../../fleet/lint/testdata/keys/test.agekey"}, 0},
		{"assume a source", []string{filepath.Join(fixtures, "missing-source/trigger"), "--assume", "GitRepository/flux-system/other"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if out, code := run(t, tt.args...); code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
		})
	}
}
