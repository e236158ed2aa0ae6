package kustomization

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// quietFiles are a waited-for workload and plain configuration.
var quietFiles = map[string]string{
	"app/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.local/web:1
`,
	"app/config.yaml": configMapYAML("web-config", "k", "v"),
	"cms/a.yaml":      configMapYAML("a", "k", "1"),
	"cms/b.yaml":      configMapYAML("b", "k", "2"),
}

// TestRestartOverConvergedKustomizationsWritesNothing converges three
// Kustomizations (one waits for a Deployment, one with a reconcile request
// already handled), then runs the first pass of a restarted controller
// over them: a Reconciler with nothing in memory (no build cache, no
// parked waits, a new health cache). That pass writes nothing: no watch
// from the etcd revision before it sees a change of a Kustomization, an
// Event or an applied object, up to the revision after it. A reconcile
// request, and drift, are then still handled and written.
func TestRestartOverConvergedKustomizationsWritesNothing(t *testing.T) {
	f, sha := newFixture(t, quietFiles)
	rev := "main@sha1:" + sha
	ks := []*kustomizev1.Kustomization{
		f.kustomization("waits", "./app", func(s *kustomizev1.KustomizationSpec) { s.Wait = true }),
		f.kustomization("plain", "./cms", nil),
		f.kustomization("requested", "./cms", func(s *kustomizev1.KustomizationSpec) { s.NamePrefix = "r-" }),
	}
	f.env.Create(t, ks[0], ks[1], ks[2])
	for _, k := range ks {
		f.waitApplied(k, rev)
	}
	f.env.RequestReconcile(t, ks[2])
	f.env.WaitForReady(t, ks[2], nil)
	if h := conditions.Get(ks[0], meta.HealthyCondition); h == nil || h.Status != metav1.ConditionTrue {
		t.Fatalf("Healthy = %+v before the restart", h)
	}

	restarted := restartedReconciler(t)
	from := etcdRevision(t, f)
	for _, k := range ks {
		firstPass(t, restarted, k)
	}
	if writes := writesSince(t, f, from, etcdRevision(t, f)); len(writes) > 0 {
		t.Errorf("the first pass over converged Kustomizations wrote:\n%s", strings.Join(writes, "\n"))
	}

	// What changes is still written: a request moves
	// lastHandledReconcileAt, drift is corrected.
	f.env.RequestReconcile(t, ks[2])
	token := ks[2].Annotations[meta.ReconcileRequestAnnotation]
	firstPass(t, restarted, ks[2])
	f.env.WaitForReady(t, ks[2], func() (bool, string) {
		return ks[2].Status.LastHandledReconcileAt == token, "handled " + ks[2].Status.LastHandledReconcileAt
	})
	cm := f.configMap("a")
	cm.Data["k"] = "drifted"
	if err := f.env.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	before := etcdRevision(t, f)
	// The apply memo trusts the object's resourceVersion as the new
	// manager's watch reports it: a pass that runs before that watch has
	// delivered the edit sees the old one and leaves the object, as a
	// running controller would until the edit's event queues it again.
	// So passes are repeated until one has seen it.
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		firstPass(t, restarted, ks[1])
		got := f.configMap("a").Data["k"]
		return got == "1", "drift not corrected: k = " + got
	})
	if writes := writesSince(t, f, before, etcdRevision(t, f)); !containsPrefix(writes, "MODIFIED Kustomization/plain") {
		t.Errorf("correcting drift wrote %v, want the Kustomization's status among them", writes)
	}
}

// restartedReconciler is a Reconciler as a new process starts it: its own
// manager (caches, health watch), nothing remembered.
func restartedReconciler(t *testing.T) *Reconciler {
	t.Helper()
	return reconcilerOn(t, testenv.Get(t))
}

// reconcilerOn is restartedReconciler talking to the API server through
// env's Config.
func reconcilerOn(t *testing.T, env *testenv.Env) *Reconciler {
	t.Helper()
	var r *Reconciler
	err := testenv.StartManager(t.Context(), env, func(mgr ctrl.Manager) error {
		r = newReconciler(mgr, Options{})
		return r.WatchHealth(mgr)
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// firstPass reconciles k once with r, as the restarted controller's queue
// does for every object it lists, and checks that it succeeded.
func firstPass(t *testing.T, r *Reconciler, k *kustomizev1.Kustomization) {
	t.Helper()
	var res ctrl.Result
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var err error
		res, err = r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(k)})
		// The new manager's caches may not hold k yet.
		return err == nil, fmt.Sprint(err)
	})
	if res.RequeueAfter < 50*time.Minute {
		t.Errorf("%s requeued after %s, want its interval", k.Name, res.RequeueAfter)
	}
}

// etcdRevision is the resourceVersion of a fresh List: the revision etcd
// is at.
func etcdRevision(t *testing.T, f *fixture) string {
	t.Helper()
	var list corev1.NamespaceList
	if err := f.env.Client.List(context.Background(), &list, client.Limit(1)); err != nil {
		t.Fatal(err)
	}
	return list.ResourceVersion
}

// writesSince lists the changes between two etcd revisions to what a
// Kustomization controller writes in the fixture's namespace:
// Kustomizations, Events and the kinds the fixture applies.
func writesSince(t *testing.T, f *fixture, from, to string) []string {
	t.Helper()
	wc, err := client.NewWithWatch(f.env.Config, client.Options{Scheme: f.env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, list := range []client.ObjectList{
		&kustomizev1.KustomizationList{}, &corev1.EventList{}, &corev1.ConfigMapList{}, &appsv1.DeploymentList{},
	} {
		writes = append(writes, watchUntil(t, wc, list, f.ns, from, to)...)
	}
	return writes
}

// watchUntil watches list's kind in ns from revision from and returns the
// changes up to revision to.
func watchUntil(t *testing.T, wc client.WithWatch, list client.ObjectList, ns, from, to string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := wc.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{
		ResourceVersion: from, AllowWatchBookmarks: true, SendInitialEvents: nil,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The bookmark that closes the window: a write to the same kind
	// after to, or the end of the timeout when nothing came.
	var out []string
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			obj, isObject := ev.Object.(client.Object)
			if !isObject {
				continue
			}
			if newer(obj.GetResourceVersion(), to) {
				return out
			}
			if ev.Type != watch.Bookmark {
				kind := strings.TrimSuffix(fmt.Sprintf("%T", list), "List")
				kind = kind[strings.LastIndex(kind, ".")+1:]
				out = append(out, fmt.Sprintf("%s %s/%s", ev.Type, kind, obj.GetName()))
			}
		case <-time.After(2 * time.Second):
			return out
		}
	}
}

// newer compares resourceVersions as the etcd revisions they are.
func newer(rv, than string) bool {
	var a, b int64
	_, _ = fmt.Sscan(rv, &a)
	_, _ = fmt.Sscan(than, &b)
	return a > b
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
