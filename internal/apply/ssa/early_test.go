package ssa_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// numberedConfigMaps returns n ConfigMaps cm-000… in ns with data a: value(i).
func numberedConfigMaps(t *testing.T, ns string, n int, value func(i int) string) []*unstructured.Unstructured {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: %s}\ndata: {a: %s}\n---\n", i, ns, value(i))
	}
	return objects(t, b.String())
}

// warmDiscovery makes the client's first request of ConfigMaps, which
// discovers the kind: that request is not the Apply's doing.
func warmDiscovery(t *testing.T, m *ssa.Manager, ns string) {
	t.Helper()
	warm := &unstructured.UnstructuredList{}
	warm.SetAPIVersion("v1")
	warm.SetKind("ConfigMapList")
	if err := m.Client().List(context.Background(), warm, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
}

// early plans objs in batches of size before Apply is called.
func early(m *ssa.Manager, opts ssa.ApplyOptions, objs []*unstructured.Unstructured, size int) *ssa.EarlyPlans {
	e := m.EarlyPlans(context.Background(), opts)
	for start := 0; start < len(objs); start += size {
		e.Add(objs[start:min(start+size, len(objs))])
	}
	return e
}

// TestEarlyPlansAreTaken: objects planned early are not read or dry-run
// again by Apply, and one given to Apply changed since is.
func TestEarlyPlansAreTaken(t *testing.T) {
	m, count := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	warmDiscovery(t, m, ns)
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: "flux-system"}, Memo: ssa.NewMemo()}
	objs := numberedConfigMaps(t, ns, 30, func(int) string { return `"1"` })
	requests := count.requests.Load()
	e := early(m, opts, objs, 10)
	changed := numberedConfigMaps(t, ns, 30, func(i int) string {
		if i == 15 {
			return `"2"`
		}
		return `"1"`
	})
	opts.Early = e
	cs, err := m.Apply(context.Background(), changed, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.Stop()
	// Early: the labelled list and the names list once (first batch),
	// 30 dry-runs. Apply: cm-015 dry-run again (absent, so not read);
	// 30 applies.
	if n, want := count.requests.Load()-requests, int64(2+30+1+30); n != want {
		t.Errorf("%d requests, want %d", n, want)
	}
	if n := count.dryRuns.Load(); n != 31 {
		t.Errorf("%d dry-runs, want 31", n)
	}
	if got := strings.Count(cs.Changes(), "created"); got != 30 {
		t.Errorf("%d created, want 30:\n%s", got, cs.Changes())
	}
	if v, _, _ := unstructured.NestedString(get(t, "v1", "ConfigMap", ns, "cm-015").Object, "data", "a"); v != "2" {
		t.Errorf("cm-015 data.a = %q, want the value given to Apply, 2", v)
	}
}

// TestEarlyPlanFailureWritesNothing: an object whose early dry-run failed
// fails Apply with the message Apply gives without early plans, and
// nothing of its stage is written.
func TestEarlyPlanFailureWritesNothing(t *testing.T) {
	m, count := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: "flux-system"}}
	objs := numberedConfigMaps(t, ns, 30, func(i int) string {
		if i == 17 {
			return "1" // not a string: the API server refuses it
		}
		return `"1"`
	})
	_, want := m.Apply(context.Background(), objs, opts)
	if want == nil || !strings.Contains(want.Error(), "ConfigMap/"+ns+"/cm-017 dry-run failed") {
		t.Fatalf("without early plans: err = %v, want a dry-run failure of cm-017", want)
	}
	opts.Early = early(m, opts, objs, 10)
	writes := count.writes.Load()
	_, err := m.Apply(context.Background(), objs, opts)
	if err == nil || err.Error() != want.Error() {
		t.Errorf("with early plans: err = %v, want %v", err, want)
	}
	if n := count.writes.Load() - writes; n != 0 {
		t.Errorf("%d writes, want none", n)
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("v1")
	list.SetKind("ConfigMapList")
	if err := testenv.Get(t).Client.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels(opts.Owner.Labels())); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d ConfigMaps written, want none", len(list.Items))
	}
}

// TestEarlyPlansDroppedAfterAWritingStage: once a stage wrote (a
// Namespace created), the plans made before are not trusted.
func TestEarlyPlansDroppedAfterAWritingStage(t *testing.T) {
	m, count := newManager(t)
	env := testenv.Get(t)
	ns := env.Namespace(t)
	warmDiscovery(t, m, ns)
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: "flux-system"}}
	cms := numberedConfigMaps(t, ns, 10, func(int) string { return `"1"` })
	e := early(m, opts, cms, 10)
	e.Stop()
	newNS := uniqueName("early")
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": newNS}}})
	})
	objs := append(objects(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+newNS+"}\n"), cms...)
	dryRuns := count.dryRuns.Load()
	opts.Early = e
	if _, err := m.Apply(context.Background(), objs, opts); err != nil {
		t.Fatal(err)
	}
	if n := count.dryRuns.Load() - dryRuns; n != 1+10 {
		t.Errorf("%d dry-runs, want 11: the Namespace's and the ConfigMaps' again", n)
	}
}

func TestOneStage(t *testing.T) {
	cm := schema.GroupKind{Kind: "ConfigMap"}
	role := schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}
	for _, tc := range []struct {
		name   string
		kinds  []schema.GroupKind
		custom []schema.GroupKind
		want   bool
	}{
		{"one kind", []schema.GroupKind{cm}, nil, true},
		{"ordinary kinds", []schema.GroupKind{cm, role, {Group: "apps", Kind: "Deployment"}}, nil, true},
		{"with a namespace", []schema.GroupKind{cm, {Kind: "Namespace"}}, nil, false},
		{"with a CRD", []schema.GroupKind{{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, cm}, nil, false},
		{"with a class", []schema.GroupKind{cm, {Group: "storage.k8s.io", Kind: "StorageClass"}}, nil, false},
		{"with a custom stage kind", []schema.GroupKind{cm, role}, []schema.GroupKind{role}, false},
		{"custom stage kinds only", []schema.GroupKind{role}, []schema.GroupKind{role}, true},
	} {
		if got := ssa.OneStage(tc.kinds, tc.custom); got != tc.want {
			t.Errorf("%s: OneStage = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestEarlyPlansLeaveKnownObjectsToApply: objects the memo knows are not
// planned early: Apply counts them unchanged, most often without a request.
func TestEarlyPlansLeaveKnownObjectsToApply(t *testing.T) {
	m, count := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: "flux-system"}, Memo: ssa.NewMemo()}
	objs := numberedConfigMaps(t, ns, 10, func(int) string { return `"1"` })
	if _, err := m.Apply(context.Background(), objs, opts); err != nil {
		t.Fatal(err)
	}
	requests := count.requests.Load()
	early(m, opts, objs, 5).Stop()
	if n := count.requests.Load() - requests; n != 0 {
		t.Errorf("%d early requests for objects the memo knows, want none", n)
	}
}
