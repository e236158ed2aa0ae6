package ssa_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// intendManifest is a Namespace and count ConfigMaps in it, the last one
// annotated ssa: Ignore; bad, when not empty, is the data of cm-1.
func intendManifest(ns string, count int, bad string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
	for i := range count {
		data, annotations := `{k: "1"}`, "{}"
		if i == 1 && bad != "" {
			data = bad
		}
		if i == count-1 {
			annotations = "{kustomize.toolkit.fluxcd.io/ssa: Ignore}"
		}
		fmt.Fprintf(&sb, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: %s, annotations: %s}\ndata: %s\n",
			i, ns, annotations, data)
	}
	return sb.String()
}

// configMapExists reports whether the ConfigMap ns/name is in the cluster.
func configMapExists(t *testing.T, ns, name string) bool {
	t.Helper()
	err := testenv.Get(t).Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestApplyIntendWrites: IntendWrites hears of every object of each stage
// but those an annotation skips, runs while the stage's dry-runs are sent
// (here it returns only once all of them were), and the stage writes
// nothing before it returned; BeforeWrite still hears of the writes.
func TestApplyIntendWrites(t *testing.T) {
	m, counter := newManager(t)
	ctx := context.Background()
	ns := uniqueName("intend")
	const count = 6
	objs := objects(t, intendManifest(ns, count, ""))
	deleteAfter(t, objs)
	start := counter.dryRuns.Load()
	var intents, writes []string
	intend := func(_ context.Context, entries []ssa.ChangeSetEntry) error {
		var ids []string
		for _, e := range entries {
			if e.Action != "" {
				t.Errorf("%s: action %q before the dry-run, want none", e.ObjMetadata, e.Action)
			}
			ids = append(ids, e.ObjMetadata.String())
		}
		intents = append(intents, strings.Join(ids, ", "))
		if entries[0].ObjMetadata.GroupKind.Kind != "ConfigMap" {
			return nil
		}
		// One dry-run for the Namespace, one for each ConfigMap but the
		// skipped one: all sent while IntendWrites still runs.
		want := start + count
		deadline := time.Now().Add(30 * time.Second)
		for counter.dryRuns.Load() < want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := counter.dryRuns.Load(); got < want {
			t.Errorf("%d dry-runs sent while IntendWrites ran, want %d: the stage waited for it to validate", got-start, want-start)
		}
		for i := range count {
			if configMapExists(t, ns, fmt.Sprintf("cm-%d", i)) {
				t.Errorf("cm-%d written before IntendWrites returned", i)
			}
		}
		return nil
	}
	before := func(_ context.Context, entries []ssa.ChangeSetEntry) error {
		writes = append(writes, fmt.Sprint(len(entries)))
		return nil
	}
	if _, err := m.Apply(ctx, objs, ssa.ApplyOptions{IntendWrites: intend, BeforeWrite: before}); err != nil {
		t.Fatal(err)
	}
	var cms []string
	for i := range count - 1 {
		cms = append(cms, fmt.Sprintf("ConfigMap/%s/cm-%d", ns, i))
	}
	want := []string{"Namespace/" + ns, strings.Join(cms, ", ")}
	if diff := cmp.Diff(want, intents); diff != "" {
		t.Errorf("IntendWrites calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", fmt.Sprint(count - 1)}, writes); diff != "" {
		t.Errorf("BeforeWrite calls, by number of writes (-want +got):\n%s", diff)
	}
	if !configMapExists(t, ns, "cm-0") {
		t.Error("cm-0 not applied")
	}
}

// TestApplyIntendWritesFailures: a stage whose dry-run fails writes
// nothing, and Apply returns only after IntendWrites did; an error of
// IntendWrites stops the stage before it writes.
func TestApplyIntendWritesFailures(t *testing.T) {
	m, _ := newManager(t)
	ctx := context.Background()
	ns := uniqueName("intendfail")
	objs := objects(t, intendManifest(ns, 3, "{k: 1}")) // a number: refused
	deleteAfter(t, objs)
	var returned bool
	slow := func(_ context.Context, entries []ssa.ChangeSetEntry) error {
		if entries[0].ObjMetadata.GroupKind.Kind == "ConfigMap" {
			time.Sleep(time.Second) // longer than the dry-runs
			returned = true
		}
		return nil
	}
	_, err := m.Apply(ctx, objs, ssa.ApplyOptions{IntendWrites: slow,
		BeforeWrite: func(_ context.Context, entries []ssa.ChangeSetEntry) error {
			if entries[0].ObjMetadata.GroupKind.Kind == "ConfigMap" {
				t.Error("BeforeWrite called for a stage that failed its dry-run")
			}
			return nil
		}})
	if want := fmt.Sprintf("ConfigMap/%s/cm-1 dry-run failed", ns); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
	if !returned {
		t.Error("Apply returned before IntendWrites")
	}
	if configMapExists(t, ns, "cm-0") {
		t.Error("cm-0 written although cm-1's dry-run failed")
	}

	boom := errors.New("boom")
	objs = objects(t, intendManifest(ns, 3, ""))
	_, err = m.Apply(ctx, objs, ssa.ApplyOptions{IntendWrites: func(_ context.Context, entries []ssa.ChangeSetEntry) error {
		if entries[0].ObjMetadata.GroupKind.Kind == "ConfigMap" {
			return boom
		}
		return nil
	}})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want IntendWrites'", err)
	}
	if configMapExists(t, ns, "cm-0") {
		t.Error("cm-0 written although IntendWrites failed")
	}
}
