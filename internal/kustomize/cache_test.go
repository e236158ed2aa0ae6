package kustomize

import (
	"context"
	"maps"
	"strings"
	"testing"
)

func configMap(name, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  v: " + value + "\n"
}

// cacheTree is two applications: a with a kustomization.yaml and a base
// outside its path, b without one (generated from its files).
func cacheTree() map[string]string {
	return map[string]string{
		"apps/a/kustomization.yaml": "resources:\n- cm.yaml\n- ../../base\n",
		"apps/a/cm.yaml":            configMap("a", "one"),
		"base/kustomization.yaml":   "resources:\n- cm.yaml\n",
		"base/cm.yaml":              configMap("base", "one"),
		"apps/b/cm.yaml":            configMap("b", "one"),
		"README.md":                 "readme\n",
	}
}

// TestBuildCache builds the same Kustomizations from trees that differ
// a little: an unchanged input is answered from the cache, any change
// to a file read, to a listed directory or to the options builds again.
func TestBuildCache(t *testing.T) {
	with := func(edits map[string]string) string {
		files := cacheTree()
		maps.Copy(files, edits)
		return newRoot(t, files)
	}
	first := with(nil)
	cache := NewBuildCache()
	ctx := WithBuildCache(context.Background(), cache)
	build := func(root, path, prefix string) *Result {
		t.Helper()
		res, err := Build(ctx, BuildOptions{Root: root, Path: path, NamePrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	wantA := string(mustYAML(t, build(first, "apps/a", "")))
	build(first, "apps/b", "")
	for _, tc := range []struct {
		name       string
		edits      map[string]string
		path       string
		prefix     string
		cached     bool
		wantInYAML string
	}{
		{"untouched tree", nil, "apps/a", "", true, "name: base"},
		{"a file nobody reads", map[string]string{"README.md": "changed\n"}, "apps/a", "", true, "name: base"},
		{"the other application", map[string]string{"apps/b/cm.yaml": configMap("b", "two")}, "apps/a", "", true, "v: one"},
		{"a file it reads", map[string]string{"apps/a/cm.yaml": configMap("a", "two")}, "apps/a", "", false, "v: two"},
		{"its base", map[string]string{"base/cm.yaml": configMap("base", "two")}, "apps/a", "", false, "v: two"},
		{"another option", nil, "apps/a", "x-", false, "name: x-a"},
		{"a new file where the kustomization is generated", map[string]string{"apps/b/new.yaml": configMap("new", "one")}, "apps/b", "", false, "name: new"},
		{"a new file beside a kustomization.yaml", map[string]string{"apps/a/notes.txt": "x"}, "apps/a", "", false, "name: base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, builds := cache.Stats()
			res := build(with(tc.edits), tc.path, tc.prefix)
			h, b := cache.Stats()
			if cached := h == hits+1 && b == builds; cached != tc.cached {
				t.Errorf("answered from the cache: %v, want %v (hits %d→%d, builds %d→%d)", cached, tc.cached, hits, h, builds, b)
			}
			if y := string(mustYAML(t, res)); !strings.Contains(y, tc.wantInYAML) {
				t.Errorf("build lacks %q:\n%s", tc.wantInYAML, y)
			}
		})
	}
	// A result handed out is the caller's: changing it changes no later
	// answer.
	res := build(first, "apps/a", "")
	res.Objects[0].SetName("mutated")
	if got := string(mustYAML(t, build(first, "apps/a", ""))); got != wantA {
		t.Errorf("a cached result changed with the copy handed out:\n%s", got)
	}
}
