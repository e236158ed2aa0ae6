package gitrepository

import (
	"context"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/git"
)

// gated is the Git client of the tests' reconciler: a clone of a URL a
// test holds waits until the test lets it go, so the test can look at the
// object while its reconcile runs.
var gated = &gateClient{Client: git.NewClient(), held: map[string]chan struct{}{}}

type gateClient struct {
	git.Client
	mu   sync.Mutex
	held map[string]chan struct{}
}

// hold makes clones of url wait until the returned function is called.
func (g *gateClient) hold(t *testing.T, url string) func() {
	ch := make(chan struct{})
	g.mu.Lock()
	g.held[url] = ch
	g.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			g.mu.Lock()
			delete(g.held, url)
			g.mu.Unlock()
			close(ch)
		})
	}
	t.Cleanup(release)
	return release
}

func (g *gateClient) Remote(ctx context.Context, url string, auth *git.Auth) git.Remote {
	g.mu.Lock()
	defer g.mu.Unlock()
	return gateRemote{Remote: g.Client.Remote(ctx, url, auth), wait: g.held[url]}
}

type gateRemote struct {
	git.Remote
	wait chan struct{} // nil: not held
}

func (r gateRemote) Clone(dir string, opts git.CloneOptions) (*git.Commit, error) {
	if r.wait != nil {
		<-r.wait
	}
	return r.Remote.Clone(dir, opts)
}

// TestProgressIsVisibleWhileCloning holds the clone and looks at the
// GitRepository meanwhile: source-controller's progress messages on
// Reconciling=True, and Ready Unknown (the first run has no artifact; the
// second was requested, "reconciliation in progress").
func TestProgressIsVisibleWhileCloning(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "org/app.git")
	first := srv.Commit(t, "org/app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})
	url := srv.HTTPURL("org/app.git")

	release := gated.hold(t, url)
	repo := newRepo(ns, "app", url, &sourcev1.GitRepositoryRef{Branch: "main"})
	env.Create(t, repo)
	waitProgress(t, env, repo, metav1.ConditionUnknown, "building artifact")
	release()
	waitReady(t, env, repo, "main@sha1:"+first)

	second := srv.Commit(t, "org/app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 2\n"}, Message: "second"})
	release = gated.hold(t, url)
	env.RequestReconcile(t, repo)
	waitProgress(t, env, repo, metav1.ConditionUnknown, "building artifact: new upstream revision 'main@sha1:"+second+"'")
	release()
	repo = waitReady(t, env, repo, "main@sha1:"+second)
	if c := conditions.Get(repo, meta.ReconcilingCondition); c != nil {
		t.Errorf("Reconciling after success = %+v, want none", c)
	}
}

// waitProgress waits until obj is Reconciling=True (Progressing) with msg
// and its Ready condition has status ready.
func waitProgress(t *testing.T, env *testenv.Env, obj *sourcev1.GitRepository, ready metav1.ConditionStatus, msg string) {
	t.Helper()
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		rec, rdy := conditions.Get(obj, meta.ReconcilingCondition), conditions.Get(obj, meta.ReadyCondition)
		if rec == nil || rdy == nil {
			return false, "no Reconciling or Ready condition"
		}
		ok := rec.Status == metav1.ConditionTrue && rec.Reason == meta.ProgressingReason && rec.Message == msg && rdy.Status == ready
		return ok, "Reconciling " + string(rec.Status) + " " + rec.Message + "; Ready " + string(rdy.Status) + " " + rdy.Message
	})
}
