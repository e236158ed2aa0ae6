package lintcmd_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/lintcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
	"github.com/weir-gitops/weir/internal/fleet"
)

const fixtures = "../../fleet/lint/testdata/fixtures"

// outsideGit copies the rule fixtures to a directory outside any Git work
// tree, where DIR is the repository as it always was. In place they lie
// inside weir's own work tree, whose root their spec.paths are not
// relative to.
func outsideGit(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixtures)); err != nil {
		t.Fatal(err)
	}
	if root, err := fleet.WorkTreeRoot(dir); err != nil || root != "" {
		t.Skipf("%s lies in the Git work tree %q (%v)", dir, root, err)
	}
	return dir
}

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
	fx := outsideGit(t)
	before := filepath.Join(fx, "seed-003/before")
	after := filepath.Join(fx, "seed-003/after")
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
	fixtures := outsideGit(t)
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

// workTrees holds whole repositories whose spec.paths are relative to
// their root, as Flux repositories are.
const workTrees = "../../fleet/testdata/worktrees"

// workTree copies the repository name of workTrees to a new directory
// outside any Git work tree and, with init, makes it the root of one.
func workTree(t *testing.T, name string, init bool) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(workTrees, name))); err != nil {
		t.Fatal(err)
	}
	if root, err := fleet.WorkTreeRoot(dir); err != nil || root != "" {
		t.Skipf("%s lies in the Git work tree %q (%v)", dir, root, err)
	}
	if init {
		if _, err := git.PlainInit(dir, false); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestWorkTree runs `weir lint DIR` on directories of Git work trees:
// spec.path resolves from the work tree's root, the entry points are
// looked for inside DIR (DIR itself when it holds none), --path is
// relative to DIR, and files are named from the root. Outside a work tree
// DIR is the repository, as it always was. {root} in args is the
// repository's directory.
func TestWorkTree(t *testing.T) {
	for _, tt := range []struct {
		name, repo string
		git        bool
		dir        string
		args       []string
		code       int
		// golden names the expected output, or for exit 2 the error says
		// errHas.
		golden, errHas string
	}{
		{"a cluster directory", "kustomize-helm-example", true, "clusters/staging", nil, 0, "worktree-staging", ""},
		{"the clusters directory", "kustomize-helm-example", true, "clusters", nil, 0, "worktree-clusters", ""},
		{"the work tree's root, as before", "kustomize-helm-example", true, ".", nil, 0, "worktree-clusters", ""},
		{"outside Git, the root as before", "kustomize-helm-example", false, ".", nil, 0, "worktree-clusters", ""},
		{"--path relative to a cluster directory", "kustomize-helm-example", true, "clusters/staging", []string{"--path", "../production"}, 0, "worktree-production", ""},
		{"--path relative to the clusters directory", "kustomize-helm-example", true, "clusters", []string{"--path", "production"}, 0, "worktree-production", ""},
		{"--path relative to the root", "kustomize-helm-example", true, ".", []string{"--path", "clusters/production"}, 0, "worktree-production", ""},
		{"--root names the source's root", "kustomize-helm-example", false, "clusters/staging", []string{"--root", "{root}"}, 0, "worktree-staging", ""},
		{"Flux's example with ArtifactGenerator: ExternalArtifact sources built offline", "kustomize-helm-example-artifacts", true, ".", nil, 0, "worktree-artifacts", ""},
		{"the graph of that example, ExternalArtifact edges", "kustomize-helm-example-artifacts", true, "clusters/staging", []string{"--graph", "-o", "json"}, 0, "worktree-artifacts-graph", ""},
		{"a fleet below tests/ with its root syncs", "tests-fleet", true, "tests/fleet", nil, 0, "worktree-tests-fleet", ""},
		{"--path in a fleet below tests/", "tests-fleet", true, "tests/fleet", []string{"--path", "clusters/prod", "--graph", "-o", "json"}, 0, "worktree-tests-fleet-prod", ""},
		{"an entry directory holding the directories its Kustomizations sync", "flat-entry", true, "deploy", nil, 0, "worktree-flat-entry", ""},
		{"the graph of that entry directory", "flat-entry", true, "deploy", []string{"--graph", "-o", "json"}, 0, "worktree-flat-entry-graph", ""},
		{"the same outside Git, named with --path", "flat-entry", false, ".", []string{"--path", "deploy"}, 0, "worktree-flat-entry", ""},
		{"outside Git a cluster directory is the repository, as before", "kustomize-helm-example", false, "clusters/staging", nil, 2, "", "no entry point"},
		{"--path out of the work tree", "kustomize-helm-example", true, "clusters/staging", []string{"--path", "../../.."}, 2, "", "entry point ..: outside the repository"},
		{"DIR outside --root", "kustomize-helm-example", true, "clusters/staging", []string{"--root", "{root}/apps"}, 2, "", "is not inside --root"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := workTree(t, tt.repo, tt.git)
			args := []string{filepath.Join(root, filepath.FromSlash(tt.dir))}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "{root}", root))
			}
			out, code := run(t, args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			if tt.code == 2 {
				if !strings.Contains(out, tt.errHas) {
					t.Errorf("the error does not say %q:\n%s", tt.errHas, out)
				}
				return
			}
			if strings.Contains(out, root) {
				t.Errorf("the output names the repository's directory %s, not repository-relative paths:\n%s", root, out)
			}
			for _, rule := range []string{"path-not-found", "duplicate-object", "build-failed", "missing-source"} {
				if strings.Contains(out, rule) {
					t.Errorf("%s reported:\n%s", rule, out)
				}
			}
			if tt.golden != "" {
				golden.Assert(t, filepath.Join("testdata", tt.golden+".golden"), []byte(out))
			}
		})
	}
}

// TestRootInsideAWorkTree: the rule fixtures lie inside weir's own work
// tree, their spec.paths relative to each fixture; --root says so, and
// the output is the one they give outside Git.
func TestRootInsideAWorkTree(t *testing.T) {
	before := filepath.Join(fixtures, "seed-003/before")
	out, code := run(t, before, "--root", before)
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	golden.Assert(t, filepath.Join("testdata", "text.golden"), []byte(out))
}
