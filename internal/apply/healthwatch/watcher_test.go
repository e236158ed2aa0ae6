package healthwatch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

// newWatcher starts a Watcher's cache against the test API server; owners
// are ConfigMaps (any kind does).
func newWatcher(t *testing.T) *Watcher {
	t.Helper()
	env := testenv.Get(t)
	httpClient, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(env.Config, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCache(env.Config, mapper, func(o metav1.Object) string { return ssa.AppliedDigest(o, "weir-test", nil) })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	return New(c, mapper, func() client.Object { return &corev1.ConfigMap{} })
}

// TestWatcherQueuesTheOwnersOfAChangedObject tracks a Deployment that does
// not exist yet for two owners: its creation queues both, a change after
// one of them stopped waiting queues the other only, and the Reader serves
// it from the cache without managed fields and pod template. Secrets are
// cached by their metadata only.
func TestWatcherQueuesTheOwnersOfAChangedObject(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	w := newWatcher(t)
	deploy := ssa.ObjMetadata{GroupKind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, Namespace: ns, Name: "later"}
	a, b := types.NamespacedName{Namespace: ns, Name: "a"}, types.NamespacedName{Namespace: ns, Name: "b"}
	ctx := context.Background()
	for _, owner := range []types.NamespacedName{a, b} {
		if !w.Track(ctx, owner, []ssa.ObjMetadata{deploy}) {
			t.Fatalf("Deployments are not watched")
		}
	}
	labels := map[string]string{"app": "later"}
	obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}}},
	}}
	env.Create(t, obj)
	if got := queued(t, w, 2); !got[a] || !got[b] {
		t.Errorf("creation queued %v, want a and b", got)
	}

	w.Untrack(a)
	env.Update(t, obj, func() { obj.Spec.Paused = true })
	if got := queued(t, w, 1); got[a] || !got[b] {
		t.Errorf("change queued %v, want b only", got)
	}
	if w.Tracked() != 1 {
		t.Errorf("Tracked() = %d, want 1", w.Tracked())
	}

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err := w.Reader(env.Client, nil).Get(ctx, client.ObjectKey{Namespace: ns, Name: "later"}, u); err != nil {
		t.Fatal(err)
	}
	if _, hasTemplate, _ := unstructured.NestedMap(u.Object, "spec", "template"); len(u.GetManagedFields()) != 0 || hasTemplate {
		t.Errorf("the cached Deployment keeps managed fields (%d) or its pod template (%v)", len(u.GetManagedFields()), hasTemplate)
	}
	if paused, _, _ := unstructured.NestedBool(u.Object, "spec", "paused"); !paused {
		t.Errorf("the cached Deployment lost the rest of its spec")
	}
}

// TestSecretsAreWatchedByMetadataOnly: a Secret's creation queues its
// owner, and the Reader serves it from the cache without its data: the
// cache never holds a credential.
func TestSecretsAreWatchedByMetadataOnly(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	w := newWatcher(t)
	ctx := context.Background()
	owner := types.NamespacedName{Namespace: ns, Name: "a"}
	if !w.Track(ctx, owner, []ssa.ObjMetadata{{GroupKind: schema.GroupKind{Kind: "Secret"}, Namespace: ns, Name: "s"}}) {
		t.Fatal("Secrets are not watched")
	}
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}, StringData: map[string]string{"password": "hunter2"}})
	if got := queued(t, w, 1); !got[owner] {
		t.Errorf("creation queued %v", got)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := w.Reader(env.Client, nil).Get(ctx, client.ObjectKey{Namespace: ns, Name: "s"}, u); err != nil {
		t.Fatal(err)
	}
	if _, hasData := u.Object["data"]; hasData || u.GetUID() == "" || u.GetKind() != "Secret" {
		t.Errorf("cached Secret = %v, want its metadata only", u.Object)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := w.cache.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Fatalf("listing the cached Secrets: %v (%d)", err, len(list.Items))
	}
	if strings.Contains(fmt.Sprintf("%+v", list.Items[0]), "hunter2") {
		t.Error("the cache holds the Secret's data")
	}
}

// TestLiveTellsWhatWasApplied applies a ConfigMap as the digest's field
// manager: Live answers with its uid, resourceVersion and applied digest
// from the cache; a status-free write by another manager to a field
// nobody applies moves the resourceVersion but not the digest; an edit
// of an applied field moves both.
func TestLiveTellsWhatWasApplied(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	w := newWatcher(t)
	ctx := context.Background()
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	key := client.ObjectKey{Namespace: ns, Name: "cm"}
	apply := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": ns}, "data": map[string]any{"a": "1"}}}
	if err := env.Client.Patch(ctx, apply, client.Apply, client.FieldOwner("weir-test")); err != nil { //nolint:staticcheck // the apply patch type is what is tested
		t.Fatal(err)
	}
	live := func(want string) ssa.LiveView {
		t.Helper()
		var v ssa.LiveView
		testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
			got, ok := w.Live(ctx, gvk, key)
			v = got
			return ok && got.ResourceVersion == want, fmt.Sprintf("Live = %+v, %v; want resourceVersion %s", got, ok, want)
		})
		return v
	}
	first := live(apply.GetResourceVersion())
	if first.UID != apply.GetUID() || first.Applied == "" {
		t.Fatalf("Live = %+v", first)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}
	env.Update(t, cm, func() { cm.Data["other"] = "x" }) // another manager, a field nobody applies
	second := live(cm.ResourceVersion)
	if second.Applied != first.Applied {
		t.Error("a write to a field nobody applies changed the applied digest")
	}
	env.Update(t, cm, func() { cm.Data["a"] = "2" })
	third := live(cm.ResourceVersion)
	if third.Applied == first.Applied {
		t.Error("an edit of an applied field left the applied digest as it was")
	}
	if _, ok := w.Live(ctx, gvk, client.ObjectKey{Namespace: ns, Name: "absent"}); ok {
		t.Error("Live answered for an object that does not exist")
	}
}

// TestWatcherWithAKindThatDoesNotExist: Track says the owner must poll,
// and the Reader goes to the API server (NotFound by kind, not a hang).
func TestWatcherWithAKindThatDoesNotExist(t *testing.T) {
	w := newWatcher(t)
	widget := ssa.ObjMetadata{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}, Namespace: "default", Name: "w"}
	start := time.Now()
	if w.Track(context.Background(), types.NamespacedName{Namespace: "default", Name: "a"}, []ssa.ObjMetadata{widget}) {
		t.Fatal("Track reports a kind without a definition as watched")
	}
	if took := time.Since(start); took > informerTimeout {
		t.Errorf("Track took %s", took)
	}
	if !w.Track(context.Background(), types.NamespacedName{Namespace: "default", Name: "a"}, nil) {
		t.Error("Track of nothing is not watched")
	}
}

// queued collects the owners queued until n arrived.
func queued(t *testing.T, w *Watcher, n int) map[types.NamespacedName]bool {
	t.Helper()
	got := map[types.NamespacedName]bool{}
	timeout := time.After(testenv.DefaultTimeout)
	for len(got) < n {
		select {
		case e := <-w.events:
			got[client.ObjectKeyFromObject(e.Object)] = true
		case <-timeout:
			t.Fatalf("queued %v, want %d owners", got, n)
		}
	}
	// Nothing else arrives: the watch queues the owners of that object only.
	select {
	case e := <-w.events:
		got[client.ObjectKeyFromObject(e.Object)] = true
	case <-time.After(300 * time.Millisecond):
	}
	return got
}
