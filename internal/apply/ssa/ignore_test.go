package ssa

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
)

func TestRemovePointer(t *testing.T) {
	doc := func() map[string]any {
		return map[string]any{
			"spec": map[string]any{"replicas": int64(2), "a/b": "slash", "m~n": "tilde",
				"containers": []any{map[string]any{"name": "x", "image": "i"}, map[string]any{"name": "y"}}},
		}
	}
	for _, tc := range []struct {
		pointer string
		want    func(map[string]any)
		err     bool
	}{
		{"/spec/replicas", func(d map[string]any) { delete(d["spec"].(map[string]any), "replicas") }, false},
		{"/spec/a~1b", func(d map[string]any) { delete(d["spec"].(map[string]any), "a/b") }, false},
		{"/spec/m~0n", func(d map[string]any) { delete(d["spec"].(map[string]any), "m~n") }, false},
		{"/spec/containers/0/image", func(d map[string]any) {
			delete(d["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any), "image")
		}, false},
		{"/spec/containers/1", func(d map[string]any) {
			s := d["spec"].(map[string]any)
			s["containers"] = s["containers"].([]any)[:1]
		}, false},
		{"/spec/containers/7/image", func(map[string]any) {}, false},
		{"/spec/containers/-", func(map[string]any) {}, false},
		{"/nothing/here", func(map[string]any) {}, false},
		{"spec/replicas", nil, true},
		{"", nil, true},
	} {
		got := doc()
		err := RemovePointer(got, tc.pointer)
		if tc.err {
			if err == nil {
				t.Errorf("%q: no error", tc.pointer)
			}
			continue
		}
		want := doc()
		tc.want(want)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("%q: err %v, diff (-want +got):\n%s", tc.pointer, err, cmp.Diff(want, got))
		}
	}
}

func TestIgnorePaths(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("apps")
	obj.SetName("podinfo")
	obj.SetLabels(map[string]string{"tier": "web"})
	obj.SetAnnotations(map[string]string{"team": "a"})
	rules := []meta.IgnoreRule{
		{Paths: []string{"/spec/replicas"}},
		{Paths: []string{"/a"}, Target: &meta.Selector{Kind: "Deployment"}},
		{Paths: []string{"/b"}, Target: &meta.Selector{Kind: "Deploy"}},
		{Paths: []string{"/c"}, Target: &meta.Selector{Group: "apps", Version: "v1", Name: "pod.*", Namespace: "apps"}},
		{Paths: []string{"/d"}, Target: &meta.Selector{LabelSelector: "tier in (web,db)", AnnotationSelector: "team=a"}},
		{Paths: []string{"/e"}, Target: &meta.Selector{LabelSelector: "tier=db"}},
		{Paths: []string{"/f"}, Target: &meta.Selector{Group: ""}},
		{Paths: []string{"/g"}, Target: &meta.Selector{Namespace: "other"}},
	}
	got, err := IgnorePaths(rules, obj)
	if want := []string{"/spec/replicas", "/a", "/c", "/d", "/f"}; err != nil || !cmp.Equal(got, want) {
		t.Errorf("IgnorePaths = %v, %v; want %v", got, err, want)
	}
	if _, err := IgnorePaths([]meta.IgnoreRule{{Paths: []string{"/x"}, Target: &meta.Selector{Name: "("}}}, obj); err == nil {
		t.Error("an invalid name regexp is not an error")
	}
	if _, err := IgnorePaths([]meta.IgnoreRule{{Paths: []string{"/x"}, Target: &meta.Selector{LabelSelector: "a in"}}}, obj); err == nil {
		t.Error("an invalid label selector is not an error")
	}
}
