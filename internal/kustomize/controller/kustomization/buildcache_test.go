package kustomization

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/render"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

func result(n int) *kustomize.Result {
	r := &kustomize.Result{Checksum: fmt.Sprintf("sha256:%d", n)}
	for i := range n {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind("ConfigMap")
		o.SetName(fmt.Sprintf("cm-%d", i))
		r.Objects = append(r.Objects, o)
	}
	return r
}

func TestBuildCache(t *testing.T) {
	a, b, c := types.NamespacedName{Name: "a"}, types.NamespacedName{Name: "b"}, types.NamespacedName{Name: "c"}
	cache := newBuildCache(10)

	cache.put(a, "k1", result(4))
	got, ok := cache.get(a, "k1")
	if !ok || len(got.Objects) != 4 || got.Checksum != "sha256:4" {
		t.Fatalf("get after put = %v, %v", got, ok)
	}
	got.Objects[0].SetName("mutated")
	if again, _ := cache.get(a, "k1"); again.Objects[0].GetName() != "cm-0" {
		t.Error("a caller's change reached the cache")
	}
	stored := result(4)
	if err := unstructured.SetNestedField(stored.Objects[1].Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	cache.put(a, "k1", stored)
	want := stored.Objects[1].DeepCopy()
	stored.Objects[1].SetName("mutated after put")
	if got, _ := cache.get(a, "k1"); !equality.Semantic.DeepEqual(got.Objects[1].Object, want.Object) {
		t.Errorf("cached object = %v, want %v as put", got.Objects[1].Object, want.Object)
	}
	if _, ok := cache.get(a, "k2"); ok {
		t.Error("a different key hit")
	}

	cache.put(b, "k1", result(4))
	cache.put(c, "k1", result(4)) // 12 objects > 10: a, the oldest, goes
	if _, ok := cache.get(a, "k1"); ok {
		t.Error("the oldest entry survived the budget")
	}
	if _, ok := cache.get(c, "k1"); !ok {
		t.Error("the newest entry was evicted")
	}

	remote := result(1)
	remote.Remote = true
	cache.put(a, "k1", remote)
	if _, ok := cache.get(a, "k1"); ok {
		t.Error("a build with remote bases was cached")
	}
	cache.forget(c)
	if _, ok := cache.get(c, "k1"); ok {
		t.Error("forget left the entry")
	}
	if off := newBuildCache(-1); func() bool { off.put(a, "k", result(1)); _, ok := off.get(a, "k"); return ok }() {
		t.Error("a disabled cache kept a build")
	}
}

func TestBuildKeyCoversInputs(t *testing.T) {
	spec := &kustomizev1.KustomizationSpec{Path: "./app"}
	base, _ := buildKey("sha256:1", spec, map[string]string{"a": "1", "b": "2"}, render.Options{})
	same, _ := buildKey("sha256:1", spec, map[string]string{"b": "2", "a": "1"}, render.Options{})
	if base != same {
		t.Error("the key depends on map order")
	}
	for name, key := range map[string]func() (string, error){
		"digest": func() (string, error) {
			return buildKey("sha256:2", spec, map[string]string{"a": "1", "b": "2"}, render.Options{})
		},
		"spec": func() (string, error) {
			return buildKey("sha256:1", &kustomizev1.KustomizationSpec{Path: "./other"}, map[string]string{"a": "1", "b": "2"}, render.Options{})
		},
		"vars": func() (string, error) {
			return buildKey("sha256:1", spec, map[string]string{"a": "1", "b": "3"}, render.Options{})
		},
		"options": func() (string, error) {
			return buildKey("sha256:1", spec, map[string]string{"a": "1", "b": "2"}, render.Options{NoRemoteBases: true})
		},
	} {
		if k, _ := key(); k == base {
			t.Errorf("a change of %s keeps the key", name)
		}
	}
}

// TestDeleteDuringFirstBuild finalizes one Kustomization while another is
// in its first build, on another goroutine, as two workers do at the
// default --concurrent=4. Run with -race: the finalizer reaches the build
// cache only through the same sync.Once that made it.
func TestDeleteDuringFirstBuild(t *testing.T) {
	finalized := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		<-finalized // the build is under way until the deletion is done
		http.NotFound(w, nil)
	}))
	defer srv.Close()
	r := &Reconciler{Fetcher: &artifact.Fetcher{}}
	building := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "building", Namespace: "ns"}}
	deleted := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{
		Name: "deleted", Namespace: "ns", Finalizers: []string{meta.Finalizer},
	}}

	built := make(chan error, 1)
	go func() {
		a := &meta.Artifact{URL: srv.URL + "/fleet.tar.gz", Digest: "sha256:" + strings.Repeat("0", 64)}
		_, err := r.fetchAndBuild(context.Background(), building, a, &outcome{}, nil)
		built <- err
	}()
	if err := r.finalize(context.Background(), deleted); err != nil {
		t.Fatal(err)
	}
	close(finalized)
	if _, ok := errs.AsWaiting(<-built); !ok {
		t.Error("the build of a missing artifact does not wait for the source")
	}
	if len(deleted.Finalizers) != 0 {
		t.Errorf("finalizers %v left", deleted.Finalizers)
	}
}
