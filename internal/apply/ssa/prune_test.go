package ssa_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func configMapID(ns, name string) ssa.ObjMetadata {
	return ssa.ObjMetadata{Namespace: ns, Name: name, GroupKind: schema.GroupKind{Kind: "ConfigMap"}}
}

func exists(t *testing.T, apiVersion, kind, ns, name string) bool {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := testenv.Get(t).Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil && u.GetDeletionTimestamp() == nil
}

func TestPruneProtections(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	owner := &ssa.Owner{Name: "apps", Namespace: "flux-system"}
	_, err := m.Apply(ctx, objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: stale, namespace: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: keep
  namespace: %[1]s
  annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: adopted, namespace: %[1]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: paused, namespace: %[1]s}
`, ns)), ssa.ApplyOptions{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	// Someone pauses "paused" in the cluster.
	paused := get(t, "v1", "ConfigMap", ns, "paused")
	paused.SetAnnotations(map[string]string{kustomizev1.ReconcileAnnotation: kustomizev1.ReconcileDisabledValue})
	if err := testenv.Get(t).Client.Update(ctx, paused, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	// Another Kustomization takes "adopted" over; "unlabelled" was never
	// applied with owner labels.
	if _, err := m.Apply(ctx, objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: adopted, namespace: %[1]s}
`, ns)), ssa.ApplyOptions{Owner: &ssa.Owner{Name: "other", Namespace: "flux-system"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(ctx, objects(t, fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: unlabelled, namespace: %[1]s}
`, ns)), ssa.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}

	var toPrune []ssa.ObjMetadata
	for _, name := range []string{"stale", "keep", "adopted", "paused", "unlabelled", "gone"} {
		toPrune = append(toPrune, configMapID(ns, name))
	}
	cs, err := m.Prune(ctx, toPrune, ssa.PruneOptions{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ssa.Action{
		"ConfigMap/" + ns + "/stale":      ssa.Deleted,
		"ConfigMap/" + ns + "/gone":       ssa.Deleted,
		"ConfigMap/" + ns + "/keep":       ssa.Skipped,
		"ConfigMap/" + ns + "/adopted":    ssa.Skipped,
		"ConfigMap/" + ns + "/paused":     ssa.Skipped,
		"ConfigMap/" + ns + "/unlabelled": ssa.Skipped,
	}
	if diff := cmp.Diff(want, actions(cs)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	for name, want := range map[string]bool{"stale": false, "keep": true, "adopted": true, "paused": true, "unlabelled": true} {
		if got := exists(t, "v1", "ConfigMap", ns, name); got != want {
			t.Errorf("ConfigMap %s exists: %v, want %v", name, got, want)
		}
	}
}

// TestPruneReverseOrder prunes a whole set: custom resources and objects
// go before their Namespace, the Namespace before the CRD.
func TestPruneReverseOrder(t *testing.T) {
	m, _ := newManager(t)
	ctx := context.Background()
	ns := uniqueName("pruned")
	group := ns + ".example.com"
	owner := &ssa.Owner{Name: "apps", Namespace: "flux-system"}
	objs := objects(t, stagedSet(group, ns, "hello"))
	deleteAfter(t, objs)
	applied, err := m.Apply(ctx, objs, ssa.ApplyOptions{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := m.Prune(ctx, applied.Objects(), ssa.PruneOptions{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range cs.Entries {
		got = append(got, e.String())
	}
	want := []string{
		"Widget/" + ns + "/gizmo deleted",
		"Deployment/" + ns + "/podinfo deleted",
		"Service/" + ns + "/podinfo deleted",
		"ConfigMap/" + ns + "/podinfo deleted",
		"ClusterRole/" + ns + "-widget-viewer deleted",
		"Namespace/" + ns + " deleted",
		"CustomResourceDefinition/widgets." + group + " deleted",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prune order (-want +got):\n%s", diff)
	}
	if exists(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets."+group) {
		t.Error("CRD still there")
	}

	// Pruning again: everything is gone, including the Widget kind itself.
	cs, err = m.Prune(ctx, applied.Objects(), ssa.PruneOptions{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cs.Entries {
		if e.Action != ssa.Deleted {
			t.Errorf("second prune: %s", e)
		}
	}
}
