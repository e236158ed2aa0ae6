package diffcmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

const syncYAML = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  url: https://example.com/fleet.git
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m
  path: ./clusters/dev
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`

func ksYAML(name, path string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ` + name + `
  namespace: flux-system
spec:
  interval: 10m
  path: ` + path + `
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`
}

func deploymentYAML(image, app string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  selector:
    matchLabels:
      app: ` + app + `
  template:
    metadata:
      labels:
        app: ` + app + `
    spec:
      containers:
      - name: web
        image: ` + image + `
`
}

func secretYAML(token string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n  namespace: apps\nstringData:\n  token: " + token + "\n"
}

const settingsYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: apps\ndata:\n  color: blue\n"

// history is a fleet repository's commits, in order, each tagged.
var history = []gitserver.Commit{
	{Tag: "v0", Files: map[string]string{
		"clusters/dev/flux-system/gotk-sync.yaml": syncYAML,
		"clusters/dev/apps.yaml":                  ksYAML("apps", "./apps") + "---\n" + ksYAML("legacy", "./legacy") + "---\n" + ksYAML("tools", "./tools"),
		"apps/kustomization.yaml":                 "resources:\n- deployment.yaml\n- secret.yaml\n- settings.yaml\n",
		"apps/deployment.yaml":                    deploymentYAML("web:1", "web"),
		"apps/secret.yaml":                        secretYAML("hunter2"),
		"apps/settings.yaml":                      settingsYAML,
		"legacy/namespace.yaml":                   "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: legacy\n",
		"legacy/cm.yaml":                          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n  namespace: legacy\n",
		"tools/cm.yaml":                           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tools\n  namespace: apps\n",
	}},
	// a changed image
	{Tag: "image", Files: map[string]string{"apps/deployment.yaml": deploymentYAML("web:2", "web")}},
	// a removed object, a changed Deployment selector, a changed Secret
	{Tag: "breaking", Delete: []string{"apps/settings.yaml"}, Files: map[string]string{
		"apps/kustomization.yaml": "resources:\n- deployment.yaml\n- secret.yaml\n",
		"apps/deployment.yaml":    deploymentYAML("web:2", "website"),
		"apps/secret.yaml":        secretYAML("correct-horse"),
	}},
	// a removed prune: true Kustomization
	{Tag: "unlegacy", Files: map[string]string{
		"clusters/dev/apps.yaml": ksYAML("apps", "./apps") + "---\n" + ksYAML("tools", "./tools"),
	}},
	// a build that fails
	{Tag: "broken", Files: map[string]string{"apps/kustomization.yaml": "resources:\n- deployment.yaml\n- missing.yaml\n"}},
	// fixed, and a HelmRelease of a chart in the repository
	{Tag: "chart", Files: map[string]string{
		"apps/kustomization.yaml":         "resources:\n- deployment.yaml\n- secret.yaml\n- hello.yaml\n",
		"apps/hello.yaml":                 helloRelease("hello"),
		"charts/hello/Chart.yaml":         "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"charts/hello/values.yaml":        "greeting: hi\n",
		"charts/hello/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
		"charts/hello/templates/sec.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-token\nstringData:\n  token: {{ .Values.greeting | sha256sum | quote }}\n",
	}},
	// the release's values
	{Tag: "values", Files: map[string]string{"apps/hello.yaml": helloRelease("bonjour")}},
}

func helloRelease(greeting string) string {
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: hello
  namespace: apps
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/hello
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
  values:
    greeting: ` + greeting + `
`
}

// fleetRepo commits history into a fresh repository and returns its
// directory; commit names are the same on every run.
func fleetRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitserver.InitLocal(t, dir)
	for _, c := range history {
		gitserver.CommitLocal(t, dir, c)
	}
	return dir
}

// runDiff runs `weir diff args...` and returns stdout, stderr and the exit
// code.
func runDiff(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &clideps.Deps{})
	cmd.SetArgs(args)
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	code := 0
	var exit *output.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.Code
		if exit.Err != nil {
			errOut.WriteString(exit.Err.Error() + "\n")
		}
	case err != nil:
		t.Fatalf("weir diff %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// TestDiffBase diffs the fixture history revision by revision against
// golden files, with the exit code and the number of builds each side
// ran.
func TestDiffBase(t *testing.T) {
	dir := fleetRepo(t)
	for _, tc := range []struct {
		name, base, head, format string
		code                     int
		progress                 string
	}{
		// Only apps reads the changed file: one build at head.
		{"image", "v0", "image", "text", 1, "4 Kustomization builds, 0 chart renders; image@sha1:105bb1a0e5c3f3d70dd7b038613acd6c38fcd82c: 1 builds, 3 reused"},
		{"breaking", "image", "breaking", "text", 1, ""},
		{"unlegacy", "breaking", "unlegacy", "text", 1, ""},
		{"all", "v0", "unlegacy", "markdown", 1, ""},
		{"all", "v0", "unlegacy", "json", 1, ""},
		{"same", "unlegacy", "unlegacy", "text", 0, ": 0 builds, 3 reused"},
		{"broken", "unlegacy", "broken", "text", 2, ""},
		{"chart", "unlegacy", "chart", "text", 1, "1 chart renders"},
		// The chart is rendered once per side, with the code of weir build hr.
		{"values", "chart", "values", "text", 1, "1 builds, 2 reused (inputs unchanged), 1 chart renders"},
	} {
		t.Run(tc.name+"."+tc.format, func(t *testing.T) {
			stdout, stderr, code := runDiff(t, "--base", tc.base, "--head", tc.head, "-o", tc.format, dir)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.progress) {
				t.Errorf("stderr lacks %q:\n%s", tc.progress, stderr)
			}
			if strings.Contains(stdout, "hunter2") || strings.Contains(stdout, "correct-horse") {
				t.Errorf("a Secret value shows:\n%s", stdout)
			}
			golden.Assert(t, filepath.Join("testdata", "base", tc.name+"."+tc.format), []byte(stdout))
		})
	}
}

// TestDiffBaseWorkingTree diffs uncommitted changes (no --head), and
// exits 2 when it cannot run.
func TestDiffBaseWorkingTree(t *testing.T) {
	dir := fleetRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "apps", "kustomization.yaml"), []byte("resources:\n- deployment.yaml\n- secret.yaml\n- extra.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "apps", "extra.yaml"), []byte(strings.ReplaceAll(settingsYAML, "settings", "extra")), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runDiff(t, "--base", "unlegacy", filepath.Join(dir, "apps", ".."))
	if code != 1 || !strings.Contains(stdout, "..working tree\n") || !strings.Contains(stdout, "  created ConfigMap/apps/extra\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The working tree fixes a broken revision: a change, not a failure.
	stdout, stderr, code = runDiff(t, "--base", "broken", dir)
	if code != 1 || !strings.Contains(stdout, "render failed: at the base revision: kustomize build failed") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{dir}, "--base is required"},
		{[]string{"--base", "nope", dir}, `revision not found: "nope"`},
		{[]string{"--base", "HEAD", "-o", "yaml", dir}, `unknown output format "yaml"`},
		{[]string{"--base", "HEAD", t.TempDir()}, "opening the Git repository"},
		{[]string{"--base", "HEAD", "--source", "x", dir}, `--source "x": want NAME=DIR`},
	} {
		_, stderr, code := runDiff(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("weir diff %s: exit %d, stderr %q, want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestDiffBaseInsideTheRepository runs `weir diff --base` on a cluster
// directory, as `weir lint` is run: spec.path (./apps) is relative to the
// repository's root, not to the directory given, so the report is the one
// of the whole repository, for committed revisions and for the working
// tree. Before, each side was loaded from clusters/dev itself and every
// Kustomization's path was missing.
func TestDiffBaseInsideTheRepository(t *testing.T) {
	dir := fleetRepo(t)
	cluster := filepath.Join(dir, "clusters", "dev")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"two revisions", []string{"--base", "v0", "--head", "image"}},
		{"the working tree", []string{"--base", "v0"}},
		{"--path relative to the directory", []string{"--base", "v0", "--head", "image", "--path", "."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantOut, wantErr, wantCode := runDiff(t, append(tc.args[:len(tc.args):len(tc.args)], dir)...)
			if tc.name == "--path relative to the directory" {
				wantOut, wantErr, wantCode = runDiff(t, "--base", "v0", "--head", "image", "--path", "clusters/dev", dir)
			}
			stdout, stderr, code := runDiff(t, append(tc.args[:len(tc.args):len(tc.args)], cluster)...)
			if code != wantCode || code == 2 {
				t.Errorf("exit code %d, want %d (from the root); stderr:\n%s", code, wantCode, stderr)
			}
			if stdout != wantOut {
				t.Errorf("report from clusters/dev:\n%s\nfrom the root:\n%s\nstderr:\n%s\nroot's stderr:\n%s", stdout, wantOut, stderr, wantErr)
			}
		})
	}
}
