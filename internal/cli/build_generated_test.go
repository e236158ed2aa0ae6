package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// exampleFixture is Flux's example repository laid out with an
// ArtifactGenerator (clusters/<env>/artifacts.yaml), shared with the fleet
// loader's tests.
const exampleFixture = "../fleet/testdata/worktrees/kustomize-helm-example-artifacts"

// writeExample copies the example into a Git work tree.
func writeExample(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n"}
	for rel, data := range readFiles(t, exampleFixture) {
		files[rel] = string(data)
	}
	writeFiles(t, root, files)
	return root
}

// TestBuildKustomizationGeneratedArtifact: without --path, build runs the
// ArtifactGenerator that writes the Kustomization's ExternalArtifact on
// the repository's files and builds spec.path inside the result; the
// cluster of the --kustomization-file decides which of two generators of
// one name applies, and --path keeps its meaning.
func TestBuildKustomizationGeneratedArtifact(t *testing.T) {
	root := writeExample(t)
	build := func(env, name string) result {
		t.Helper()
		file := filepath.Join(root, "clusters", env, name+".yaml")
		return weir(t, "build", "ks", name, "--kustomization-file", file, "--dry-run")
	}
	r := build("staging", "apps")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Output())
	}
	assertGolden(t, "build/generated-apps-staging.golden", r.Output())
	if strings.Contains(r.Output(), "weir-build-artifact-") {
		t.Error("the output names the temporary directory")
	}

	r = build("production", "apps")
	if r.Code != 0 || !strings.Contains(r.Stdout, "podinfo.production.example.com") || strings.Contains(r.Stdout, "staging") {
		t.Errorf("production's apps are not built from apps/production: exit %d\n%s", r.Code, r.Output())
	}

	// A Kustomization file of neither cluster: the two generators of apps
	// differ, and nothing says which one applies.
	data, err := os.ReadFile(filepath.Join(root, "clusters", "staging", "apps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"apps.yaml": string(data)})
	r = weir(t, "build", "ks", "apps", "--kustomization-file", filepath.Join(root, "apps.yaml"), "--dry-run")
	if want := "ExternalArtifact flux-system/apps is generated differently in clusters/production, clusters/staging"; r.Code == 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("two clusters: exit %d, want an error containing %q\n%s", r.Code, want, r.Output())
	}

	// --path is the local directory, as in flux: here the generated
	// tree's staging/ is apps/staging with its base beside it.
	r = weir(t, "build", "ks", "apps", "-n", "flux-system", "--path", filepath.Join(root, "apps", "staging"),
		"--kustomization-file", filepath.Join(root, "clusters", "staging", "apps.yaml"), "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "podinfo.staging.example.com") {
		t.Errorf("--path: exit %d\n%s", r.Code, r.Output())
	}
}

// writeMultiSource lays out a repository whose generator composes one
// artifact from this repository (@repo) and from another one (@shared),
// and the Kustomization building it into ns.
func writeMultiSource(t *testing.T, ns string) (root, shared, ksFile string) {
	t.Helper()
	root, shared = t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{
		".git/HEAD":              "ref: refs/heads/main\n",
		"app/kustomization.yaml": "resources:\n- config.yaml\n- common\n",
		"app/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  from: repo\n",
		"clusters/dev/artifacts.yaml": `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: composed
  namespace: flux-system
spec:
  sources:
    - alias: repo
      kind: GitRepository
      name: flux-system
    - alias: shared
      kind: GitRepository
      name: shared
  artifacts:
    - name: app
      copy:
        - from: "@repo/app/**"
          to: "@artifact/"
        - from: "@shared/common/**"
          to: "@artifact/common/"
`,
		"clusters/dev/app.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: flux-system
spec:
  interval: 10m
  path: ./
  prune: true
  targetNamespace: ` + ns + `
  sourceRef:
    kind: ExternalArtifact
    name: app
`,
	})
	writeFiles(t, shared, map[string]string{
		"common/kustomization.yaml": "resources:\n- shared.yaml\n",
		"common/shared.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  from: shared\n",
		"other/ignored.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\n",
	})
	return root, shared, filepath.Join(root, "clusters/dev/app.yaml")
}

// TestBuildKustomizationMultiSourceArtifact: a generator copying from two
// aliases, this repository and a --local-sources directory, builds one
// tree; diff against the API server shows its objects as created; a
// source with no local directory is an error naming the flag to give.
func TestBuildKustomizationMultiSourceArtifact(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	root, shared, ksFile := writeMultiSource(t, ns)
	local := "GitRepository/flux-system/shared=" + shared
	r := weir(t, "build", "ks", "app", "--kustomization-file", ksFile, "--dry-run", "--local-sources", local)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Output())
	}
	assertGolden(t, "build/generated-multi-source.golden", r.Output(), ns)

	r = weir(t, "diff", "ks", "app", "--kustomization-file", ksFile, "--local-sources", local)
	if r.Code != 1 || !strings.Contains(r.Stdout, "ConfigMap/"+ns+"/shared created") || !strings.Contains(r.Stdout, "ConfigMap/"+ns+"/app created") {
		t.Errorf("diff: exit %d, want 1 and both ConfigMaps created\n%s", r.Code, r.Output())
	}

	// --recursive from the cluster's root reaches app through its
	// generated ExternalArtifact.
	writeFiles(t, root, map[string]string{"root.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n" +
		"metadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./clusters/dev\n  prune: true\n" +
		"  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"})
	r = weir(t, "build", "ks", "flux-system", "--path", filepath.Join(root, "clusters/dev"), "--kustomization-file", filepath.Join(root, "root.yaml"),
		"--dry-run", "-r", "--local-sources", local)
	if r.Code != 0 || !strings.Contains(r.Stdout, "from: shared") || !strings.Contains(r.Stdout, "kind: ArtifactGenerator") {
		t.Errorf("--recursive: exit %d, want the generator and app's objects\n%s", r.Code, r.Output())
	}

	r = weir(t, "build", "ks", "app", "--kustomization-file", ksFile, "--dry-run")
	want := "source @shared (GitRepository/flux-system/shared) is not this repository: give its local directory with --local-sources GitRepository/flux-system/shared=PATH"
	if r.Code == 0 || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "clusters/dev/artifacts.yaml") {
		t.Errorf("unresolvable source: exit %d, want an error containing %q and the generator's file\n%s", r.Code, want, r.Output())
	}
	if strings.Contains(r.Stderr, root) {
		t.Errorf("the error names the absolute repository path:\n%s", r.Stderr)
	}

	// An ExternalArtifact no generator of the repository writes.
	writeFiles(t, root, map[string]string{"clusters/dev/nope.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n" +
		"metadata:\n  name: nope\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./\n  prune: true\n  sourceRef:\n    kind: ExternalArtifact\n    name: nope\n"})
	r = weir(t, "build", "ks", "nope", "--kustomization-file", filepath.Join(root, "clusters/dev/nope.yaml"), "--dry-run", "--local-sources", local)
	if want := "generates ExternalArtifact flux-system/nope; give the artifact's content with --path"; r.Code == 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("no generator: exit %d, want an error containing %q\n%s", r.Code, want, r.Output())
	}

	// A Kustomization of a GitRepository still needs --path.
	writeFiles(t, root, map[string]string{"clusters/dev/git.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n" +
		"metadata:\n  name: git\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./app\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"})
	r = weir(t, "build", "ks", "git", "--kustomization-file", filepath.Join(root, "clusters/dev/git.yaml"), "--dry-run")
	if r.Code == 0 || !strings.Contains(r.Stderr, "--path is required") {
		t.Errorf("GitRepository source without --path: exit %d\n%s", r.Code, r.Output())
	}
}
