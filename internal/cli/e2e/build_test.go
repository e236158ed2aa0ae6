package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/cli/clitest"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// TestBuildAndDiffMatchTheController commits an overlay (base, patch,
// variables, a Secret) that the real controller applies, then runs `weir
// build` and `weir diff` on a local copy of the same tree against the same
// Kustomization: diff must find nothing to change, which holds only if the
// CLI renders and labels exactly what the controller applied. A local edit
// must then show as drift.
func TestBuildAndDiffMatchTheController(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	files := map[string]string{
		"base/kustomization.yaml": "resources:\n- config.yaml\n- secret.yaml\n",
		"base/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: ${color}\n  size: small\n",
		"base/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\nstringData:\n  value: not-for-printing\n",
		"dev/kustomization.yaml": "resources:\n- ../base\npatches:\n- target: {kind: ConfigMap, name: settings}\n" +
			"  patch: |\n    - op: replace\n      path: /data/size\n      value: large\n",
	}
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "build.git")
	sha := srv.Commit(t, "build.git", gitserver.Commit{Files: files, Message: "overlay"})

	local := t.TempDir()
	files[".git/HEAD"] = "ref: refs/heads/main\n"
	for p, c := range files {
		full := filepath.Join(local, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "overlay", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: srv.HTTPURL("build.git"), Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "dev", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: time.Hour}, Path: "./dev", Prune: true, TargetNamespace: ns,
			NamePrefix:     "dev-",
			SourceRef:      kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "overlay"},
			PostBuild:      &kustomizev1.PostBuild{Substitute: map[string]string{"color": "green"}},
			CommonMetadata: &kustomizev1.CommonMetadata{Labels: map[string]string{"team": "blue"}},
		},
	}
	env.Create(t, repo, ks)
	env.WaitForReady(t, ks, func() (bool, string) {
		return ks.Status.LastAppliedRevision == "main@sha1:"+sha, "not applied yet"
	})

	path := filepath.Join(local, "dev")
	build := clitest.Run(t, "build", "ks", "dev", "-n", ns, "--path", path)
	if build.Code != 0 || !strings.Contains(build.Stdout, "name: dev-settings") || !strings.Contains(build.Stdout, "color: green") ||
		!strings.Contains(build.Stdout, "size: large") || strings.Contains(build.Stdout, "not-for-printing") {
		t.Fatalf("build: exit %d\n%s", build.Code, build.Output())
	}
	if diff := clitest.Run(t, "diff", "ks", "dev", "-n", ns, "--path", path); diff.Code != 0 || diff.Stdout != "" {
		t.Fatalf("diff against what the controller applied: exit %d, want 0 and nothing\n%s", diff.Code, diff.Output())
	}

	if err := os.WriteFile(filepath.Join(local, "base/config.yaml"),
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: ${color}\n  size: small\n  shape: round\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff := clitest.Run(t, "diff", "ks", "dev", "-n", ns, "--path", path)
	if diff.Code != 1 || !strings.Contains(diff.Stdout, "► ConfigMap/"+ns+"/dev-settings drifted") || !strings.Contains(diff.Stdout, "+  shape: round") {
		t.Errorf("diff after a local edit: exit %d\n%s", diff.Code, diff.Output())
	}
}
