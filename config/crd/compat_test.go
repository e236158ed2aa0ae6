package crd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestFluxSchemaCompatibility compares every generated CRD with Flux's own
// (testdata/flux, descriptions removed): names, scope, versions, printer
// columns, subresources and the whole OpenAPI schema, including patterns,
// enums, defaults and CEL rules, must be identical. Descriptions are ours.
func TestFluxSchemaCompatibility(t *testing.T) {
	want, err := filepath.Glob("testdata/flux/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("no reference CRDs in testdata/flux")
	}
	for _, ref := range want {
		name := strings.TrimSuffix(filepath.Base(ref), ".yaml")
		t.Run(name, func(t *testing.T) {
			expected := loadComparable(t, ref)
			actual := loadComparable(t, filepath.Join("bases", name+".yaml"))
			if diff := cmp.Diff(expected, actual); diff != "" {
				t.Errorf("%s differs from Flux's CRD (-flux +weir):\n%s", name, diff)
			}
		})
	}
}

// TestNoExtraCRDs makes sure every generated CRD has a Flux counterpart: weir
// serves exactly Flux's kinds.
func TestNoExtraCRDs(t *testing.T) {
	names, err := Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join("testdata/flux", n+".yaml")); err != nil {
			t.Errorf("generated CRD %s has no Flux counterpart", n)
		}
	}
}

func TestLoadLabels(t *testing.T) {
	crds, err := Load(Options{Version: "v0.1.0", Instance: "flux-system"})
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 15 {
		t.Errorf("got %d CRDs, want 15", len(crds))
	}
	for _, c := range crds {
		for k, v := range map[string]string{
			partOfLabel:   "flux",
			versionLabel:  "v0.1.0",
			instanceLabel: "flux-system",
		} {
			if c.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", c.Name, k, c.Labels[k], v)
			}
		}
		if c.Labels[componentLabel] == "" {
			t.Errorf("%s: no component label", c.Name)
		}
	}
}

// loadComparable reads a CRD file as plain data, without the parts that are
// allowed to differ: descriptions, labels and the generator's version.
func loadComparable(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("parsing %s: %v", file, err)
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "labels")
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, "controller-gen.kubebuilder.io/version")
		}
	}
	stripDescriptions(obj, false)
	return obj
}

// stripDescriptions removes every schema "description" in place. Keys of a
// "properties" map are field names, never schema keywords, so they are kept.
func stripDescriptions(node any, fieldNames bool) {
	switch n := node.(type) {
	case map[string]any:
		if !fieldNames {
			delete(n, "description")
		}
		for k, v := range n {
			stripDescriptions(v, k == "properties" && !fieldNames)
		}
	case []any:
		for _, v := range n {
			stripDescriptions(v, false)
		}
	}
}
