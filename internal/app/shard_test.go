package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// artifactLog is a reverse proxy in front of a storage server that records
// the paths fetched through it.
type artifactLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *artifactLog) serve(t *testing.T, storageAddr string) (advAddr string) {
	t.Helper()
	target, err := url.Parse("http://" + storageAddr)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.paths = append(l.paths, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func (l *artifactLog) fetched(part string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.paths {
		if strings.HasPrefix(p, http.MethodGet+" ") && strings.Contains(p, part) {
			return true
		}
	}
	return false
}

// TestShards runs two controller sets in one process, as `weir install
// --shards=shard1` deploys them: the main one with Flux's
// --watch-label-selector=!sharding.fluxcd.io/key, shard1's with
// 'sharding.fluxcd.io/key in (shard1)', each with its own storage. Each
// reconciles only its objects; a shard1 Kustomization waits for a main one
// it depends on, and reads a main GitRepository's artifact from the main
// storage.
func TestShards(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	t.Setenv("RUNTIME_NAMESPACE", ns)
	shardLabel := map[string]string{meta.ShardKeyLabel: "shard1"}

	var mainLog, shardLog requestLog
	var mainArtifacts artifactLog
	set := func(selector string, advertise func(addr string) string, log *requestLog) string {
		opts := DefaultOptions()
		opts.Controllers = []string{"source", "kustomize"}
		opts.MetricsAddr, opts.HealthAddr = "0", "0"
		opts.SkipNameValidation = true // two sets in one process
		opts.WatchLabelSelector = selector
		opts.RequeueDependency = time.Second
		addr := freeAddr(t)
		opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = t.TempDir(), addr, advertise(addr)
		runUntilStopped(t, env.Config, opts, log.wrap)
		return opts.StorageAdvAddr
	}
	mainAdv := set("!"+meta.ShardKeyLabel, func(addr string) string { return mainArtifacts.serve(t, addr) }, &mainLog)
	shardAdv := set(meta.ShardKeyLabel+" in (shard1)", func(addr string) string { return addr }, &shardLog)

	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	srv.Commit(t, "fleet.git", gitserver.Commit{Message: "b and c", Files: map[string]string{
		"b/cm.yaml": exampleConfigMap("b", "shard1"), "c/cm.yaml": exampleConfigMap("c", "cross"),
	}})
	repo := func(name string, labels map[string]string) *sourcev1.GitRepository {
		return &sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: sourcev1.GitRepositorySpec{URL: srv.HTTPURL("fleet.git"), Interval: metav1.Duration{Duration: time.Hour},
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
		}
	}
	ks := func(name, repo, path string, labels map[string]string, dependsOn ...string) *kustomizev1.Kustomization {
		k := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: kustomizev1.KustomizationSpec{
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: repo},
				Path:      path, Prune: true, TargetNamespace: ns,
				Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
			},
		}
		for _, d := range dependsOn {
			k.Spec.DependsOn = append(k.Spec.DependsOn, meta.DependencyReference{Name: d})
		}
		return k
	}
	mainRepo, shardRepo, sharedRepo := repo("main", nil), repo("shard", shardLabel), repo("shared", nil)
	// main-app's path is committed later: until then shard-app, which
	// depends on it, must wait.
	mainApp := ks("main-app", "main", "./a", nil)
	shardApp := ks("shard-app", "shard", "./b", shardLabel, "main-app")
	cross := ks("shard-cross", "shared", "./c", shardLabel)
	// Short, so that shard1's queue holds it again soon after it leaves.
	cross.Spec.Interval = metav1.Duration{Duration: 2 * time.Second}
	env.Create(t, mainRepo, shardRepo, sharedRepo, mainApp, shardApp, cross)

	waitReconciled(t, env, cross, "")
	if !mainArtifacts.fetched("/" + ns + "/shared/") {
		t.Errorf("shard-cross was applied without fetching the main GitRepository's artifact from the main storage: %v", mainArtifacts.paths)
	}
	for _, r := range []struct {
		repo *sourcev1.GitRepository
		adv  string
	}{{mainRepo, mainAdv}, {shardRepo, shardAdv}, {sharedRepo, mainAdv}} {
		testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r.repo), r.repo); err != nil {
				return false, err.Error()
			}
			a := r.repo.Status.Artifact
			return a != nil, "no artifact yet"
		})
		if u := r.repo.Status.Artifact.URL; !strings.HasPrefix(u, "http://"+r.adv+"/") {
			t.Errorf("GitRepository %s: artifact at %s, want it at %s", r.repo.Name, u, r.adv)
		}
	}

	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(shardApp), shardApp); err != nil {
			return false, err.Error()
		}
		c := conditions.Get(shardApp, meta.ReadyCondition)
		return c != nil && c.Reason == meta.DependencyNotReadyReason, repr(c)
	})
	srv.Commit(t, "fleet.git", gitserver.Commit{Message: "a", Files: map[string]string{"a/cm.yaml": exampleConfigMap("a", "main")}})
	env.RequestReconcile(t, mainRepo)
	waitReconciled(t, env, mainApp, "")
	waitReconciled(t, env, shardApp, "")
	for _, name := range []string{"a", "b", "c"} {
		var cm corev1.ConfigMap
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
			t.Errorf("ConfigMap %s: %v", name, err)
		}
	}

	// Each set wrote the status of its objects only.
	for _, o := range []struct {
		path  string
		owner *requestLog
		other *requestLog
	}{
		{"/gitrepositories/main", &mainLog, &shardLog},
		{"/gitrepositories/shared", &mainLog, &shardLog},
		{"/kustomizations/main-app", &mainLog, &shardLog},
		{"/gitrepositories/shard", &shardLog, &mainLog},
		{"/kustomizations/shard-app", &shardLog, &mainLog},
		{"/kustomizations/shard-cross", &shardLog, &mainLog},
	} {
		path := "/namespaces/" + ns + o.path + "/status"
		if len(o.owner.matching(path, http.MethodPatch, http.MethodPut)) == 0 {
			t.Errorf("its controller set never wrote %s", path)
		}
		if got := o.other.matching(path, http.MethodPatch, http.MethodPut); len(got) != 0 {
			t.Errorf("the other controller set wrote %s: %v", path, got)
		}
	}

	// Unlabelled, shard-cross moves to the main set, and shard1 lets it go.
	crossStatus := "/namespaces/" + ns + "/kustomizations/shard-cross/status"
	shardWrites := len(shardLog.matching(crossStatus, http.MethodPatch, http.MethodPut))
	env.Update(t, cross, func() { delete(cross.Labels, meta.ShardKeyLabel) })
	requested := time.Now().Format(time.RFC3339Nano)
	env.Update(t, cross, func() { cross.Annotations = map[string]string{meta.ReconcileRequestAnnotation: requested} })
	waitReconciled(t, env, cross, requested)
	crossObject := "/namespaces/" + ns + "/kustomizations/shard-cross"
	shardReads := len(shardLog.matching(crossObject, http.MethodGet))
	time.Sleep(2 * cross.Spec.Interval.Duration) // shard1's requeue of it comes due
	if len(mainLog.matching(crossStatus, http.MethodPatch, http.MethodPut)) == 0 {
		t.Error("the main set did not take shard-cross over once unlabelled")
	}
	if got := shardLog.matching(crossStatus, http.MethodPatch, http.MethodPut); len(got) != shardWrites {
		t.Errorf("shard1 kept writing shard-cross once it left the shard: %v", got[shardWrites:])
	}
	// Its cache no longer holds it: a reconcile would have to read it
	// from the API server.
	if got := shardLog.matching(crossObject, http.MethodGet); len(got) != shardReads {
		t.Errorf("shard1 kept reconciling shard-cross once it left the shard: %v", got[shardReads:])
	}
}
