package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// writeLooseFleet lays out a directory without a kustomization of its own
// (so one is generated, as flux does), a variable without a default, and
// files an --ignore-paths pattern can leave out.
func writeLooseFleet(t *testing.T, ns string) (path, ksFile string) {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".git/HEAD":                  "ref: refs/heads/main\n",
		"apps/loose/config.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  env: ${env}\n  region: \"${region}\"\n",
		"apps/loose/drafts/wip.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wip\n",
		"apps/loose/skip.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skip\n",
		"apps/loose/keep/keep.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n",
		"clusters/dev/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
spec:
  interval: 10m
  path: ./apps/loose
  prune: true
  targetNamespace: ` + ns + `
  sourceRef:
    kind: GitRepository
    name: fleet
  postBuild:
    substitute:
      env: dev
`,
	})
	return filepath.Join(root, "apps/loose"), filepath.Join(root, "clusters/dev/apps.yaml")
}

// TestBuildKustomizationFlags: --strict-substitute is off by default, as in
// flux (an undefined variable becomes empty) and fails the build when on;
// --ignore-paths leaves a file and a directory out of the generated
// kustomization; --in-memory-build changes nothing (weir always builds in
// place).
func TestBuildKustomizationFlags(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	path, ksFile := writeLooseFleet(t, ns)
	build := func(extra ...string) result {
		args := append([]string{"build", "kustomization", "apps", "-n", ns, "--path", path, "--kustomization-file", ksFile, "--dry-run"}, extra...)
		return weir(t, args...)
	}

	r := build("--ignore-paths", "/drafts/,skip.yaml")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Output())
	}
	assertGolden(t, "build/ignore-paths.golden", r.Output(), ns)

	if m := build("--ignore-paths", "/drafts/,skip.yaml", "--in-memory-build"); m.Output() != r.Output() {
		t.Errorf("--in-memory-build changed the output:\n%s", m.Output())
	}

	all := build()
	for _, name := range []string{"name: wip", "name: skip", "name: keep"} {
		if !strings.Contains(all.Stdout, name) {
			t.Errorf("without --ignore-paths the build lacks %q:\n%s", name, all.Output())
		}
	}

	r = build("--strict-substitute")
	if r.Code == 0 || !strings.Contains(r.Stderr, "region") {
		t.Errorf("--strict-substitute with an undefined variable: exit %d\n%s", r.Code, r.Output())
	}
}

// TestDiffKustomizationFlags: --ignore-not-found turns a Kustomization
// missing from the cluster into no difference (exit 0, nothing printed),
// without it the same run fails (2); --progress-bar=false (and a stderr
// that is no terminal) keeps stderr empty.
func TestDiffKustomizationFlags(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	path, ksFile := writeLooseFleet(t, ns)

	r := weir(t, "diff", "kustomization", "apps", "-n", ns, "--path", path)
	if r.Code != 2 || !strings.Contains(r.Stderr, "not found") {
		t.Errorf("missing Kustomization: exit %d, want 2\n%s", r.Code, r.Output())
	}
	r = weir(t, "diff", "kustomization", "apps", "-n", ns, "--path", path, "--ignore-not-found")
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Errorf("missing Kustomization with --ignore-not-found: exit %d, want 0 and no output\n%s", r.Code, r.Output())
	}

	r = weir(t, "diff", "kustomization", "apps", "-n", ns, "--path", path, "--kustomization-file", ksFile,
		"--progress-bar=false", "--ignore-paths", "/drafts/,skip.yaml")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.Code, r.Output())
	}
	assertGolden(t, "diff/flags.golden", r.Output(), ns)
}

// writeNestedFleet lays out a root Kustomization whose path holds two
// more: web, from the same GitRepository, and tools, from another one
// whose local copy is elsewhere.
func writeNestedFleet(t *testing.T, ns string) (path, ksFile, other string) {
	t.Helper()
	root, other := t.TempDir(), t.TempDir()
	ks := func(name, source, path string) string {
		return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ` + name + `
spec:
  interval: 10m
  path: ` + path + `
  prune: true
  targetNamespace: ` + ns + `
  sourceRef:
    kind: GitRepository
    name: ` + source + `
  postBuild:
    substitute:
      tier: ` + name + `
`
	}
	writeFiles(t, root, map[string]string{
		".git/HEAD":                  "ref: refs/heads/main\n",
		"clusters/dev/web.yaml":      ks("web", "fleet", "./apps/web"),
		"clusters/dev/tools.yaml":    ks("tools", "tools", "./deploy"),
		"clusters/dev/root.yaml.txt": ks("root", "fleet", "./clusters/dev"),
		"apps/web/config.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  tier: ${tier}\n",
	})
	writeFiles(t, other, map[string]string{
		"deploy/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tools\ndata:\n  tier: ${tier}\n",
	})
	return filepath.Join(root, "clusters/dev"), filepath.Join(root, "clusters/dev/root.yaml.txt"), other
}

// TestBuildKustomizationRecursive: -r builds the Kustomizations the root
// holds with their own specs (their substitutions), from the same local
// repository for the root's source and from --local-sources for another;
// without it, the Kustomization of the other source fails the build naming
// the flag. diff -r diffs each Kustomization's objects against the cluster.
func TestBuildKustomizationRecursive(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	path, ksFile, other := writeNestedFleet(t, ns)
	args := []string{"build", "kustomization", "root", "-n", ns, "--path", path, "--kustomization-file", ksFile, "--dry-run"}

	r := weir(t, append(args, "-r")...)
	if r.Code == 0 || !strings.Contains(r.Stderr, "--local-sources GitRepository/"+ns+"/tools=PATH") {
		t.Errorf("-r without --local-sources: exit %d\n%s", r.Code, r.Output())
	}
	r = weir(t, append(args, "--recursive", "--local-sources", "GitRepository/"+ns+"/tools="+other)...)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Output())
	}
	assertGolden(t, "build/recursive.golden", r.Output(), ns)

	r = weir(t, "diff", "kustomization", "root", "-n", ns, "--path", path, "--kustomization-file", ksFile,
		"-r", "--local-sources", "GitRepository/"+ns+"/tools="+other)
	if r.Code != 1 {
		t.Fatalf("diff -r: exit %d, want 1\n%s", r.Code, r.Output())
	}
	assertGolden(t, "diff/recursive.golden", r.Output(), ns)
}
