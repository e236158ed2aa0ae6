package fleetview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

func loadFleet(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	return loadObjects(t, "fleet.yaml")
}

// loadObjects reads the objects of testdata/<file>, as the API server
// would list them.
func loadObjects(t *testing.T, file string) []unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		// Through JSON into UnmarshalJSON, so numbers are int64 as the
		// API server's are.
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	return objs
}

func assertJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", name), append(b, '\n'))
}

func TestOverview(t *testing.T) {
	all := Summaries(loadFleet(t))
	for _, tt := range []struct {
		golden string
		filter Filter
	}{
		{"overview.json", Filter{}},
		{"overview-failing.json", Filter{State: StateFailing}},
		{"overview-team-a.json", Filter{Namespace: "team-a"}},
		{"overview-kind-q.json", Filter{Kind: "kustomization", Q: "CYCLE"}},
	} {
		t.Run(tt.golden, func(t *testing.T) { assertJSON(t, tt.golden, NewOverview(all, tt.filter)) })
	}
}

func TestGraph(t *testing.T) {
	objs := loadFleet(t)
	assertJSON(t, "graph.json", NewGraph(objs, Filter{}))
	assertJSON(t, "graph-helm.json", NewGraph(objs, Filter{Kind: "HelmRelease"}))
}

// TestArtifactGenerators lists a generator, its ExternalArtifacts and
// their Kustomizations as source-watcher writes them: the overview counts
// and lists both kinds (the generator paused by its reconcile annotation
// as suspended) and the graph draws the artifact's path: GitRepository →
// ArtifactGenerator → ExternalArtifact → Kustomization, source edges all.
func TestArtifactGenerators(t *testing.T) {
	objs := loadObjects(t, "artifacts.yaml")
	assertJSON(t, "overview-artifacts.json", NewOverview(Summaries(objs), Filter{}))
	assertJSON(t, "graph-artifacts.json", NewGraph(objs, Filter{}))
}

func TestSuspendedByLatestOwner(t *testing.T) {
	objs := loadFleet(t)
	var web Summary
	for _, s := range Summaries(objs) {
		if s.Kind == "HelmRelease" && s.Name == "web" {
			web = s
		}
	}
	want := Summary{Kind: "HelmRelease", APIVersion: "helm.toolkit.fluxcd.io/v2", Namespace: "flux-system", Name: "web",
		State: StateSuspended, Reason: "InstallSucceeded", Message: "Helm install succeeded", Suspended: true,
		SuspendedBy: "weir", SuspendReason: "maintenance window", LastTransition: "2026-12-01T07:00:00Z"}
	if diff := cmp.Diff(want, web); diff != "" {
		t.Errorf("web summary (-want +got):\n%s", diff)
	}
}

// TestThousandKustomizations: the overview and graph of 1,000
// Kustomizations in chains of ten over 20 GitRepositories stay fast.
func TestThousandKustomizations(t *testing.T) {
	var objs []unstructured.Unstructured
	for i := range 20 {
		objs = append(objs, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
			"metadata": map[string]any{"name": fmt.Sprintf("repo-%d", i), "namespace": "fleet", "generation": int64(1)},
			"status":   map[string]any{"observedGeneration": int64(1), "artifact": map[string]any{"revision": "main@sha1:abc"}},
		}})
	}
	for i := range 1000 {
		spec := map[string]any{"sourceRef": map[string]any{"kind": "GitRepository", "name": fmt.Sprintf("repo-%d", i%20)}}
		if i%10 != 0 {
			spec["dependsOn"] = []any{map[string]any{"name": fmt.Sprintf("ks-%d", i-1)}}
		}
		objs = append(objs, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": fmt.Sprintf("ks-%d", i), "namespace": "fleet", "generation": int64(1)},
			"spec":     spec,
			"status": map[string]any{"observedGeneration": int64(1), "lastAppliedRevision": "main@sha1:abc", "conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded", "message": "ok",
					"lastTransitionTime": "2026-12-01T10:00:00Z"}}},
		}})
	}
	start := time.Now()
	o := NewOverview(Summaries(objs), Filter{})
	g := NewGraph(objs, Filter{})
	took := time.Since(start)
	t.Logf("overview and graph of %d objects in %v", len(objs), took)
	if len(o.Objects) != 1020 || len(g.Nodes) != 1020 || len(g.Edges) != 1000+900 {
		t.Errorf("objects %d, nodes %d, edges %d", len(o.Objects), len(g.Nodes), len(g.Edges))
	}
	if top := g.Nodes[len(g.Nodes)-1]; top.Layer != 10 {
		t.Errorf("deepest layer %d, want 10 (a source, then chains of ten)", top.Layer)
	}
	if took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}
