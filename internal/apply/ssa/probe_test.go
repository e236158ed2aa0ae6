package ssa_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestDryRunOfAbsentObject checks the API server's answer Apply relies on
// to create an object without reading it first: the dry-run apply of an
// absent object answers with an object that has no resourceVersion (it
// was never stored), that of an existing one with its resourceVersion.
func TestDryRunOfAbsentObject(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	cm := func() *unstructured.Unstructured {
		return objects(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, namespace: %s}\ndata: {a: b}\n", ns))[0]
	}
	dry := cm()
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner("test"), client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if rv := dry.GetResourceVersion(); rv != "" {
		t.Errorf("dry-run of an absent object: resourceVersion %q, want none", rv)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dry), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dry-run created the object (get: %v)", err)
	}
	stored := cm()
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(stored), client.FieldOwner("test")); err != nil {
		t.Fatal(err)
	}
	dry = cm()
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry), client.FieldOwner("test"), client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if got, want := dry.GetResourceVersion(), stored.GetResourceVersion(); got != want {
		t.Errorf("dry-run of an existing object: resourceVersion %q, want %q", got, want)
	}
}

// TestApplyReadsOnlyObjectsThatExist applies three objects of kinds with
// one object each (no list read): the two absent ones are dry-run and
// created without a read, the existing one is read after its dry-run
// showed it exists. The change set and the objects are as before; once
// the Memo knows the objects, a reapply reads each before its dry-run as
// it always did.
func TestApplyReadsOnlyObjectsThatExist(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	m, count := newManager(t)
	existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token"},
		StringData: map[string]string{"token": "old"}}
	if err := env.Client.Create(ctx, existing); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: config, namespace: %[1]s}
data: {greeting: hello}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: %[1]s}
stringData: {token: new}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: app, namespace: %[1]s}
`, ns)
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "app", Namespace: ns}, Memo: ssa.NewMemo(), KeepWritten: true}
	reads, dryRuns, writes := count.reads.Load(), count.dryRuns.Load(), count.writes.Load()
	cs, err := m.Apply(ctx, objects(t, manifest), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ServiceAccount/%[1]s/app created\nConfigMap/%[1]s/config created\nSecret/%[1]s/token configured", ns)
	if diff := cmp.Diff(want, cs.String()); diff != "" {
		t.Errorf("change set (-want +got):\n%s", diff)
	}
	got := [3]int64{count.reads.Load() - reads, count.dryRuns.Load() - dryRuns, count.writes.Load() - writes}
	if want := [3]int64{1, 3, 3}; got != want {
		t.Errorf("first apply: %d reads, %d dry-runs, %d writes; want %d, %d, %d", got[0], got[1], got[2], want[0], want[1], want[2])
	}
	if v := get(t, "v1", "Secret", ns, "token"); v.GetLabels()["kustomize.toolkit.fluxcd.io/name"] != "app" {
		t.Errorf("the existing Secret was not applied: labels %v", v.GetLabels())
	}

	reads, dryRuns, writes = count.reads.Load(), count.dryRuns.Load(), count.writes.Load()
	cs, err = m.Apply(ctx, objects(t, manifest), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.Changes(); got != "" {
		t.Errorf("reapply changed %q", got)
	}
	got = [3]int64{count.reads.Load() - reads, count.dryRuns.Load() - dryRuns, count.writes.Load() - writes}
	if want := [3]int64{3, 0, 0}; got != want {
		t.Errorf("reapply: %d reads, %d dry-runs, %d writes; want %d, %d, %d", got[0], got[1], got[2], want[0], want[1], want[2])
	}
}

// TestApplyKeepsWhatItWrote checks ChangeSet.Written: with KeepWritten,
// the server's answer to each apply that wrote (its resourceVersion is the
// stored object's), nothing for an unchanged object, and nothing without
// the option.
func TestApplyKeepsWhatItWrote(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	m, _ := newManager(t)
	manifest := func(greeting string) []*unstructured.Unstructured {
		return objects(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: %[1]s}
data: {greeting: %[2]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: %[1]s}
data: {greeting: hello}
`, ns, greeting))
	}
	id := func(name string) ssa.ObjMetadata { return configMapID(ns, name) }
	cs, err := m.Apply(ctx, manifest("hello"), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Written(id("a")) != nil {
		t.Error("Written without KeepWritten")
	}
	cs, err = m.Apply(ctx, manifest("bonjour"), ssa.ApplyOptions{KeepWritten: true})
	if err != nil {
		t.Fatal(err)
	}
	a := cs.Written(id("a"))
	if a == nil {
		t.Fatal("no answer kept for the configured ConfigMap")
	}
	if got, want := a.GetResourceVersion(), get(t, "v1", "ConfigMap", ns, "a").GetResourceVersion(); got != want {
		t.Errorf("kept resourceVersion %q, stored %q", got, want)
	}
	if g, _, _ := unstructured.NestedString(a.Object, "data", "greeting"); g != "bonjour" {
		t.Errorf("kept greeting %q, want bonjour", g)
	}
	if cs.Written(id("b")) != nil {
		t.Error("an answer kept for the unchanged ConfigMap")
	}
}
