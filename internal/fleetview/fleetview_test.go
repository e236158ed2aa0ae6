package fleetview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/testenv/golden"
)

func loadFleet(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("testdata/fleet.yaml")
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

func TestState(t *testing.T) {
	cond := func(typ, status string) map[string]any { return map[string]any{"type": typ, "status": status} }
	obj := func(kind string, gen, observed int64, suspend bool, conds ...map[string]any) *unstructured.Unstructured {
		list := make([]any, len(conds))
		for i, c := range conds {
			list[i] = c
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"kind": kind, "spec": map[string]any{"suspend": suspend},
			"status": map[string]any{"observedGeneration": observed, "conditions": list},
		}}
		u.SetGeneration(gen)
		return u
	}
	ks := "Kustomization"
	for _, tt := range []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"suspended beats stalled", obj(ks, 1, 1, true, cond("Stalled", "True")), StateSuspended},
		{"stalled beats failing", obj(ks, 1, 1, false, cond("Stalled", "True"), cond("Ready", "False")), StateStalled},
		{"ready false", obj(ks, 1, 1, false, cond("Ready", "False"), cond("Reconciling", "True")), StateFailing},
		{"reconciling true", obj(ks, 1, 1, false, cond("Ready", "True"), cond("Reconciling", "True")), StateReconciling},
		{"ready unknown", obj(ks, 1, 1, false, cond("Ready", "Unknown")), StateReconciling},
		{"generation behind", obj(ks, 2, 1, false, cond("Ready", "True")), StateReconciling},
		{"never reconciled", obj(ks, 1, 0, false), StateReconciling},
		{"ready", obj(ks, 1, 1, false, cond("Ready", "True")), StateReady},
		{"no ready condition", obj(ks, 1, 1, false), StateUnknown},
		{"static kind", obj("Provider", 1, 0, false), StateReady},
		{"static kind suspended", obj("Provider", 1, 0, true), StateSuspended},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := State(tt.u); got != tt.want {
				t.Errorf("State = %q, want %q", got, tt.want)
			}
		})
	}
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
