package app

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// requestLog records the requests a controller sends.
type requestLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		line := req.Method + " " + req.URL.Path
		if dry := req.URL.Query().Get("dryRun"); dry != "" {
			line += " dryRun"
		}
		l.mu.Lock()
		l.requests = append(l.requests, line)
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// matching returns the requests whose method is one of methods and whose
// path holds part.
func (l *requestLog) matching(part string, methods ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.requests {
		method, path, _ := strings.Cut(r, " ")
		for _, m := range methods {
			if m == method && strings.Contains(path, part) {
				out = append(out, r)
			}
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestRestartKeepsTheApplyMemo runs the kustomize controller until a
// Kustomization of three ConfigMaps is applied, stops it (it saves its apply
// memo into a Secret of RUNTIME_NAMESPACE) and runs it again: the new
// process loads the memo, so its reconcile of the unchanged Kustomization
// neither dry-runs nor writes a ConfigMap, and it writes no Secret, not
// even at its stop, since its memo did not change.
func TestRestartKeepsTheApplyMemo(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	t.Setenv("RUNTIME_NAMESPACE", ns)
	opts := DefaultOptions()
	opts.Controllers = []string{"source", "kustomize"}
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.SkipNameValidation = true // two runs in one process
	addr := freeAddr(t)
	opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = t.TempDir(), addr, addr
	ks := configMapsKustomization(t, env, ns, 3, time.Minute)
	memoSecret := client.ObjectKey{Namespace: ns, Name: leaderElectionID(opts) + "-apply-memo-0"}

	stop := runUntilStopped(t, env.Config, opts, nil)
	waitReconciled(t, env, ks, "")
	stop()
	var saved corev1.Secret
	if err := env.Client.Get(context.Background(), memoSecret, &saved); err != nil {
		t.Fatalf("no apply memo saved at stop: %v", err)
	}

	var log requestLog
	stop = runUntilStopped(t, env.Config, opts, log.wrap)
	requested := time.Now().Format(time.RFC3339Nano)
	env.Update(t, ks, func() { ks.Annotations = map[string]string{meta.ReconcileRequestAnnotation: requested} })
	waitReconciled(t, env, ks, requested)
	stop()
	if got := log.matching("/configmaps", http.MethodPatch, http.MethodPut, http.MethodPost, http.MethodDelete); len(got) != 0 {
		t.Errorf("the restarted controller wrote or dry-ran ConfigMaps of an unchanged Kustomization: %v", got)
	}
	if got := log.matching("/secrets", http.MethodPatch, http.MethodPut, http.MethodPost, http.MethodDelete); len(got) != 0 {
		t.Errorf("the restarted controller wrote its unchanged apply memo: %v", got)
	}
	var after corev1.Secret
	if err := env.Client.Get(context.Background(), memoSecret, &after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != saved.ResourceVersion {
		t.Errorf("the apply memo Secret was written (resourceVersion %s, was %s)", after.ResourceVersion, saved.ResourceVersion)
	}
}

// configMapsKustomization creates a GitRepository of count ConfigMaps
// and a prune:true Kustomization applying them into ns within timeout.
func configMapsKustomization(t *testing.T, env *testenv.Env, ns string, count int, timeout time.Duration) *kustomizev1.Kustomization {
	t.Helper()
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "many.git")
	srv.Commit(t, "many.git", gitserver.Commit{Files: map[string]string{"cms/all.yaml": testenv.ConfigMapsYAML("cm", count)}, Message: "many"})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "many", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{URL: srv.HTTPURL("many.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "many", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: repo.Name},
			Path:      "./cms", Prune: true, TargetNamespace: ns,
			Interval: metav1.Duration{Duration: time.Hour}, Timeout: &metav1.Duration{Duration: timeout},
		},
	}
	env.Create(t, repo, ks)
	return ks
}

// waitReconciled waits until ks is Ready, and has handled the reconcile
// requested at requested unless that is empty.
func waitReconciled(t *testing.T, env *testenv.Env, ks *kustomizev1.Kustomization, requested string) {
	t.Helper()
	testenv.Eventually(t, 2*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ks), ks); err != nil {
			return false, err.Error()
		}
		if requested != "" && ks.Status.LastHandledReconcileAt != requested {
			return false, "reconcile request not handled yet"
		}
		return conditions.IsReady(ks) && ks.Status.LastAppliedRevision != "", repr(conditions.Get(ks, meta.ReadyCondition))
	})
}

// runUntilStopped runs Run on cfg, its transport wrapped by wrap unless
// nil; stop ends it and checks it returned no error.
func runUntilStopped(t *testing.T, cfg *rest.Config, opts Options, wrap func(http.RoundTripper) http.RoundTripper) (stop func()) {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, opts) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
