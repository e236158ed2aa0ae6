package diffcmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// artifactsFixture is Flux's example laid out with an ArtifactGenerator.
const artifactsFixture = "../../fleet/testdata/worktrees/kustomize-helm-example-artifacts"

// fixtureFiles reads a fixture directory as a commit's files.
func fixtureFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDiffBaseExternalArtifact: the Kustomizations of the example build
// from ExternalArtifacts its ArtifactGenerator writes; a change under
// apps/staging shows in the apps Kustomization (built from the generated
// apps artifact) and in no infrastructure Kustomization, whose input
// digest stays the same.
func TestDiffBaseExternalArtifact(t *testing.T) {
	dir := t.TempDir()
	gitserver.InitLocal(t, dir)
	gitserver.CommitLocal(t, dir, gitserver.Commit{Tag: "v0", Files: fixtureFiles(t, artifactsFixture)})
	values := fixtureFiles(t, artifactsFixture)["apps/staging/podinfo-values.yaml"]
	changed := strings.Replace(values, "podinfo.staging.example.com", "podinfo.stage.example.com", 1)
	if changed == values {
		t.Fatal("the fixture's staging values name no podinfo.staging.example.com")
	}
	gitserver.CommitLocal(t, dir, gitserver.Commit{Tag: "scale", Files: map[string]string{"apps/staging/podinfo-values.yaml": changed}})
	stdout, stderr, code := runDiff(t, "--base", "v0", "--head", "scale", filepath.Join(dir, "clusters", "staging"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Kustomization/flux-system/apps") || !strings.Contains(stdout, "podinfo.stage.example.com") {
		t.Errorf("the apps Kustomization's change is not reported:\n%s", stdout)
	}
	for _, ks := range []string{"infra-controllers", "infra-configs"} {
		if strings.Contains(stdout, "Kustomization/flux-system/"+ks) {
			t.Errorf("%s, on the infrastructure artifact, is reported changed:\n%s", ks, stdout)
		}
	}
	// Only apps reads the generated apps tree: the infrastructure
	// Kustomizations' input digests (of the infrastructure tree) did not
	// change, so they are reused, not rebuilt.
	if !strings.Contains(stderr, ": 1 builds, 3 reused (inputs unchanged)") {
		t.Errorf("the head side rebuilt more than apps:\n%s", stderr)
	}
	if strings.Contains(stdout, "missing") || strings.Contains(stderr, "not local") {
		t.Errorf("a source is not resolved:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}
