package buildcache

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/render"
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
	cache := New(10)

	cache.Put(a, "k1", result(4))
	got, ok := cache.Get(a, "k1")
	if !ok || len(got.Objects) != 4 || got.Checksum != "sha256:4" {
		t.Fatalf("get after put = %v, %v", got, ok)
	}
	got.Objects[0].SetName("mutated")
	if again, _ := cache.Get(a, "k1"); again.Objects[0].GetName() != "cm-0" {
		t.Error("a caller's change reached the cache")
	}
	stored := result(4)
	if err := unstructured.SetNestedField(stored.Objects[1].Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	cache.Put(a, "k1", stored)
	want := stored.Objects[1].DeepCopy()
	stored.Objects[1].SetName("mutated after put")
	if got, _ := cache.Get(a, "k1"); !equality.Semantic.DeepEqual(got.Objects[1].Object, want.Object) {
		t.Errorf("cached object = %v, want %v as put", got.Objects[1].Object, want.Object)
	}
	if _, ok := cache.Get(a, "k2"); ok {
		t.Error("a different key hit")
	}

	cache.Put(b, "k1", result(4))
	cache.Put(c, "k1", result(4)) // 12 objects > 10: a, the oldest, goes
	if _, ok := cache.Get(a, "k1"); ok {
		t.Error("the oldest entry survived the budget")
	}
	if _, ok := cache.Get(c, "k1"); !ok {
		t.Error("the newest entry was evicted")
	}

	remote := result(1)
	remote.Remote = true
	cache.Put(a, "k1", remote)
	if _, ok := cache.Get(a, "k1"); ok {
		t.Error("a build with remote bases was cached")
	}
	cache.Forget(c)
	if _, ok := cache.Get(c, "k1"); ok {
		t.Error("forget left the entry")
	}
	if off := New(-1); func() bool { off.Put(a, "k", result(1)); _, ok := off.Get(a, "k"); return ok }() {
		t.Error("a disabled cache kept a build")
	}
}

func TestBuildKeyCoversInputs(t *testing.T) {
	spec := &kustomizev1.KustomizationSpec{Path: "./app"}
	base, _ := Key("sha256:1", spec, map[string]string{"a": "1", "b": "2"}, render.Options{})
	same, _ := Key("sha256:1", spec, map[string]string{"b": "2", "a": "1"}, render.Options{})
	if base != same {
		t.Error("the key depends on map order")
	}
	for name, key := range map[string]func() (string, error){
		"digest": func() (string, error) {
			return Key("sha256:2", spec, map[string]string{"a": "1", "b": "2"}, render.Options{})
		},
		"spec": func() (string, error) {
			return Key("sha256:1", &kustomizev1.KustomizationSpec{Path: "./other"}, map[string]string{"a": "1", "b": "2"}, render.Options{})
		},
		"vars": func() (string, error) {
			return Key("sha256:1", spec, map[string]string{"a": "1", "b": "3"}, render.Options{})
		},
		"options": func() (string, error) {
			return Key("sha256:1", spec, map[string]string{"a": "1", "b": "2"}, render.Options{NoRemoteBases: true})
		},
	} {
		if k, _ := key(); k == base {
			t.Errorf("a change of %s keeps the key", name)
		}
	}
}
