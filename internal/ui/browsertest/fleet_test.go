package browsertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// fleet is one test's small fleet: a GitRepository and three
// Kustomizations, infrastructure and apps (dependsOn infrastructure), both
// Ready, and broken, whose kustomization.yaml names a file the repository
// lacks, so it fails with BuildFailed.
type fleet struct {
	t      *testing.T
	env    *testenv.Env
	ns     string
	srv    *gitserver.Server
	repo   *sourcev1.GitRepository
	ks     map[string]*kustomizev1.Kustomization
	commit string
}

func configMap(name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  value: %q\n", name, value)
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	env := testenv.Get(t)
	f := &fleet{t: t, env: env, ns: env.Namespace(t), srv: gitserver.New(t, gitserver.Options{}), ks: map[string]*kustomizev1.Kustomization{}}
	f.srv.InitRepo(t, "fleet.git")
	f.commit = f.srv.Commit(t, "fleet.git", gitserver.Commit{Message: "first", Files: map[string]string{
		"infra/infra.yaml":          configMap("infra", "1"),
		"apps/app.yaml":             configMap("app", "1"),
		"broken/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- missing.yaml\n",
	}})
	f.repo = gitRepository(f)
	env.Create(t, f.repo)
	f.add("infrastructure", "./infra", nil)
	f.add("apps", "./apps", []meta.DependencyReference{{Name: "infrastructure"}})
	f.add("broken", "./broken", nil)
	f.waitReady("infrastructure")
	f.waitReady("apps")
	f.waitFailed("broken", "BuildFailed")
	return f
}

// gitRepository is the fleet's GitRepository "fleet" on f.srv's
// fleet.git: an hour between fetches, and no webhook, so the source moves
// only when asked to (the UI's "reconcile with source").
func gitRepository(f *fleet) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: f.ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: f.srv.HTTPURL("fleet.git"), Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
}

func (f *fleet) add(name, path string, deps []meta.DependencyReference) {
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: f.repo.Name},
			Path:      path, Prune: true, TargetNamespace: f.ns, DependsOn: deps,
			Interval: metav1.Duration{Duration: time.Hour},
			Timeout:  &metav1.Duration{Duration: 30 * time.Second},
		},
	}
	f.env.Create(f.t, k)
	f.ks[name] = k
}

func (f *fleet) waitReady(name string) {
	f.t.Helper()
	f.env.WaitForReady(f.t, f.ks[name], nil)
}

// waitFailed waits until the Kustomization's Ready condition is False with
// reason.
func (f *fleet) waitFailed(name, reason string) {
	f.t.Helper()
	k := f.ks[name]
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
			return false, err.Error()
		}
		ready := conditions.Get(k, meta.ReadyCondition)
		if ready == nil {
			return false, "no Ready condition"
		}
		return ready.Status == metav1.ConditionFalse && ready.Reason == reason, ready.Reason + ": " + ready.Message
	})
}

// pushFix commits the file broken lacks, without telling the GitRepository.
func (f *fleet) pushFix() string {
	f.t.Helper()
	return f.srv.Commit(f.t, "fleet.git", gitserver.Commit{Message: "fix broken", Files: map[string]string{
		"broken/missing.yaml": configMap("was-missing", "1"),
	}})
}
