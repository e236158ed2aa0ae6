package ssa_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestApplyMemo follows a build of three ConfigMaps through the reconciles
// a Kustomization goes through with a Memo: the objects nobody wrote cost
// no dry-run, and whatever another tool changed, or deleted, is still
// found and put back.
func TestApplyMemo(t *testing.T) {
	m, count := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	memo := ssa.NewMemo()
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: "flux-system"}, Memo: memo}
	manifest := func(b string, names ...string) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, n := range names {
			v := "1"
			if n == "b" {
				v = b
			}
			out = append(out, objects(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: %q}\n", n, ns, v))...)
		}
		return out
	}
	step := func(name string, objs []*unstructured.Unstructured, wantChanges string, wantRequests, wantWrites int64) {
		t.Helper()
		requests, writes := count.requests.Load(), count.writes.Load()
		cs, err := m.Apply(ctx, objs, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := cs.Changes(); got != wantChanges {
			t.Errorf("%s: Changes() = %q, want %q", name, got, wantChanges)
		}
		if n := count.requests.Load() - requests; n != wantRequests {
			t.Errorf("%s: %d requests, want %d", name, n, wantRequests)
		}
		if n := count.writes.Load() - writes; n != wantWrites {
			t.Errorf("%s: %d writes, want %d", name, n, wantWrites)
		}
	}
	cm := func(n string) string { return "ConfigMap/" + ns + "/" + n }
	// The client's first request of a kind discovers it; that is not the
	// Apply's doing.
	warm := &unstructured.UnstructuredList{}
	warm.SetAPIVersion("v1")
	warm.SetKind("ConfigMapList")
	if err := m.Client().List(ctx, warm, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}

	// Created: the labelled list and the metadata list say all three are
	// absent, so none is read before its dry-run and apply.
	step("first apply", manifest("1", "a", "b", "c"),
		cm("a")+" created\n"+cm("b")+" created\n"+cm("c")+" created", 2+3+3, 3)
	if memo.Len() != 3 {
		t.Errorf("memo holds %d objects, want 3", memo.Len())
	}
	// Nothing changed: the labelled list alone.
	step("no-op", manifest("1", "a", "b", "c"), "", 1, 0)

	// Another tool changes a: its new resourceVersion costs a dry-run, and
	// the apply puts the value back.
	edit(t, ns, "a", "tampered")
	step("drift", manifest("1", "a", "b", "c"), cm("a")+" configured", 1+1+1, 1)
	if got := dataA(t, ns, "a"); got != "1" {
		t.Errorf("data.a = %q after the drift correction, want 1", got)
	}
	step("after the correction", manifest("1", "a", "b", "c"), "", 1, 0)

	// The manifest of b changes: b alone is dry-run and applied.
	step("one change", manifest("2", "a", "b", "c"), cm("b")+" configured", 1+1+1, 1)

	// c is deleted behind the controller's back: read, dry-run, created.
	if err := testenv.Get(t).Client.Delete(ctx, manifest("2", "c")[0]); err != nil {
		t.Fatal(err)
	}
	step("deleted", manifest("2", "a", "b", "c"), cm("c")+" created", 1+1+1+1, 1)

	// c leaves the build: the memo forgets it.
	step("smaller build", manifest("2", "a", "b"), "", 1, 0)
	if memo.Len() != 2 {
		t.Errorf("memo holds %d objects after c left the build, want 2", memo.Len())
	}
}

// TestApplyWithoutMemoDryRunsEveryObject is the contrast: without a Memo a
// no-op reconcile dry-runs every object, as Flux does.
func TestApplyWithoutMemoDryRunsEveryObject(t *testing.T) {
	m, count := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: "flux-system"}}
	objs := objects(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: %[1]s}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: %[1]s}\n", ns))
	if _, err := m.Apply(ctx, objs, opts); err != nil {
		t.Fatal(err)
	}
	before := count.requests.Load()
	if _, err := m.Apply(ctx, objs, opts); err != nil {
		t.Fatal(err)
	}
	if n := count.requests.Load() - before; n != 1+2 {
		t.Errorf("no-op without a memo: %d requests, want a list and 2 dry-runs", n)
	}
}

// liveFromServer stands in for a watch cache in TestApplyMemoWithLive: it
// reads each object with the test's own (uncounted) client and tells what
// a healthwatch view would.
type liveFromServer struct{ t *testing.T }

func (l liveFromServer) Live(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (ssa.LiveView, bool) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := testenv.Get(l.t).Client.Get(ctx, key, u); err != nil {
		return ssa.LiveView{}, false
	}
	return ssa.LiveView{UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
		Applied: ssa.AppliedDigest(u, meta.KustomizeControllerManager, nil)}, true
}

// TestApplyMemoWithLive: with a Memo and a LiveReader, an object nobody
// wrote costs no request at all, neither does one another manager wrote a
// field of that nobody applies, nor does any after the Memo was carried
// over a restart by its Records; a hand edit of an applied field is still
// read, dry-run and put back.
func TestApplyMemoWithLive(t *testing.T) {
	m, count := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "apps", Namespace: "flux-system"}, Memo: ssa.NewMemo(), Live: liveFromServer{t}}
	objs := objects(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: %[1]s}\ndata: {a: \"1\"}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: %[1]s}\ndata: {a: \"1\"}\n", ns))
	step := func(name, wantChanges string, wantRequests int64) {
		t.Helper()
		before := count.requests.Load()
		cs, err := m.Apply(ctx, objs, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := cs.Changes(); got != wantChanges {
			t.Errorf("%s: Changes() = %q, want %q", name, got, wantChanges)
		}
		if n := count.requests.Load() - before; n != wantRequests {
			t.Errorf("%s: %d requests, want %d", name, n, wantRequests)
		}
	}
	if _, err := m.Apply(ctx, objs, opts); err != nil {
		t.Fatal(err)
	}
	step("no-op", "", 0)

	other := get(t, "v1", "ConfigMap", ns, "b")
	if err := unstructured.SetNestedField(other.Object, "x", "data", "added-by-another-tool"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Get(t).Client.Update(ctx, other, client.FieldOwner("another-tool")); err != nil {
		t.Fatal(err)
	}
	step("a field nobody applies written", "", 0)

	opts.Memo = ssa.RestoreMemo(opts.Memo.Records())
	step("after a restart", "", 0)

	edit(t, ns, "a", "tampered")
	step("hand edit", "ConfigMap/"+ns+"/a configured", 3)
	if got := dataA(t, ns, "a"); got != "1" {
		t.Errorf("data.a = %q after the drift correction, want 1", got)
	}
	step("after the correction", "", 0)
}
