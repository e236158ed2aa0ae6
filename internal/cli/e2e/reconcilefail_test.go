package e2e

import (
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

// TestReconcileFailsFastLive is issue 33's report against live controllers: a
// Kustomization whose path does not exist fails its reconcile at once, and
// `weir reconcile ks` says so at once instead of waiting out --timeout,
// both for a Kustomization created broken and for one whose spec was
// changed to a broken path (its status.observedGeneration stays behind,
// as kustomize-controller leaves it on a failure it will retry).
func TestReconcileFailsFastLive(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	srv.Commit(t, "fleet.git", gitserver.Commit{Files: manifests, Message: "first"})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: srv.HTTPURL("fleet.git"), Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	ks := func(name, path string) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: kustomizev1.KustomizationSpec{
				Interval: metav1.Duration{Duration: time.Hour}, Path: path, Prune: true, TargetNamespace: ns,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			},
		}
	}
	created, edited := ks("created-bad", "./nope"), ks("edited-bad", "./deploy")
	env.Create(t, repo, created, edited)
	env.WaitForReady(t, repo, nil)
	env.WaitForReady(t, edited, nil)
	env.Update(t, edited, func() { edited.Spec.Path = "./nope" })

	for _, name := range []string{"created-bad", "edited-bad"} {
		start := time.Now()
		res := clitest.Run(t, "reconcile", "ks", name, "--timeout", "2m", "-n", ns)
		took := time.Since(start)
		t.Logf("reconcile ks %s: exit %d after %s\n%s", name, res.Code, took.Round(time.Millisecond), res.Stderr)
		const want = "✗ Kustomization reconciliation failed: ArtifactFailed: 'kustomization path not found: stat nope: no such file or directory'\n"
		if res.Code != 1 || !strings.HasSuffix(res.Stderr, want) {
			t.Errorf("reconcile ks %s: exit %d, want 1 and %q:\n%s", name, res.Code, want, res.Stderr)
		}
		if took > 30*time.Second {
			t.Errorf("reconcile ks %s took %s: it waited for the timeout instead of reporting the failure", name, took)
		}
	}
}
