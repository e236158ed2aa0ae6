package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/cli/clitest"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startControllers })
}

// startControllers runs weir's source and kustomize controllers as
// weir-controller would, for every test of the package.
func startControllers(ctx context.Context, env *testenv.Env) error {
	_, err := controllers.Start(ctx, env, controllers.Options{Controllers: []string{"source", "kustomize"}})
	return err
}

var manifests = map[string]string{
	"deploy/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n",
}

// TestGitOpsLoop drives the day-to-day verbs against live controllers:
// get, reconcile --with-source after a push, tree, suspend and resume, and
// the failure of a source that cannot be fetched.
func TestGitOpsLoop(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	first := srv.Commit(t, "fleet.git", gitserver.Commit{Files: manifests, Message: "first"})

	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: srv.HTTPURL("fleet.git"), Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: time.Hour}, Path: "./deploy", Prune: true, TargetNamespace: ns,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
		},
	}
	env.Create(t, repo, ks)
	env.WaitForReady(t, repo, nil)
	env.WaitForReady(t, ks, func() (bool, string) {
		return ks.Status.LastAppliedRevision == "main@sha1:"+first, "first revision not applied yet"
	})

	run := func(golden string, wantCode int, args ...string) clitest.Result {
		t.Helper()
		res := clitest.Run(t, append(args, "-n", ns)...)
		if res.Code != wantCode {
			t.Errorf("weir %s: exit %d, want %d\n%s", strings.Join(args, " "), res.Code, wantCode, res.Output())
		}
		if golden != "" {
			clitest.AssertGolden(t, golden, res.Output(), ns)
		}
		return res
	}

	run("get-all.golden", 0, "get", "all")
	run("tree.golden", 0, "tree", "ks", "apps")

	second := srv.Commit(t, "fleet.git", gitserver.Commit{
		Files:   map[string]string{"deploy/more.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n"},
		Message: "second",
	})
	res := run("reconcile-with-source.golden", 0, "reconcile", "ks", "apps", "--with-source")
	if !strings.Contains(res.Stderr, "✔ applied revision main@sha1:"+second) {
		t.Errorf("reconcile --with-source did not apply the new commit %s:\n%s", second, res.Stderr)
	}
	run("tree-after-push.golden", 0, "tree", "ks", "apps")

	run("suspend.golden", 0, "suspend", "ks", "apps")
	run("resume.golden", 0, "resume", "ks", "apps")

	broken := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: srv.HTTPURL("missing.git"), Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	env.Create(t, broken)
	env.WaitHandled(t, broken)
	res = run("", 1, "reconcile", "source", "git", "broken", "--timeout", "30s")
	if !strings.Contains(res.Stderr, "✗ GitRepository reconciliation failed: GitOperationFailed: '") {
		t.Errorf("reconcile of a missing repository:\n%s", res.Stderr)
	}
	run("get-ready-false.golden", 0, "get", "sources", "git", "--status-selector", "ready=false", "-o", "name")
}
