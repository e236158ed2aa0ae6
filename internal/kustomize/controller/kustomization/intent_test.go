package kustomization

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestFailedStageInventoryKeepsOnlyWrites: the inventory records a
// stage's objects while they are dry-run (recordIntent), so a status write
// names objects the stage then refuses to write; the failed run's final
// status takes them out again, leaving the inventory the first revision
// wrote, and the fixed revision records all four.
func TestFailedStageInventoryKeepsOnlyWrites(t *testing.T) {
	files := map[string]string{"app/a.yaml": configMapYAML("a", "k", "1"), "app/b.yaml": configMapYAML("b", "k", "1")}
	f, sha := newFixture(t, files)
	k := f.kustomization("intent", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	first := inventoryIDs(k)

	from := etcdRevision(t, f)
	files["app/c.yaml"] = configMapYAML("c", "k", "1")
	files["app/d.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  k: 1\n" // a number: refused
	sha = f.push(gitserver.Commit{Files: files, Message: "c, and d refused"})
	f.env.RequestReconcile(t, k)
	ready := f.waitFailed(k, "main@sha1:"+sha, meta.ReconciliationFailedReason)
	if want := fmt.Sprintf("ConfigMap/%s/d dry-run failed", f.ns); !strings.Contains(ready.Message, want) {
		t.Errorf("Ready message %q, want it to contain %q", ready.Message, want)
	}
	if diff := cmp.Diff(first, inventoryIDs(k)); diff != "" {
		t.Errorf("inventory after the failed stage (-want +got):\n%s", diff)
	}
	if !f.absent("c") {
		t.Error("c written although d's dry-run failed")
	}
	intended := false
	for _, ids := range inventoriesSince(t, f, k, from, etcdRevision(t, f)) {
		intended = intended || slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(id, "_c__") }) &&
			slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(id, "_d__") })
	}
	if !intended {
		t.Error("no status write named c and d: the stage was not recorded while it was dry-run")
	}

	files["app/d.yaml"] = configMapYAML("d", "k", "1")
	sha = f.push(gitserver.Commit{Files: files, Message: "fix d"})
	f.env.RequestReconcile(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	if ids := inventoryIDs(k); len(ids) != 4 {
		t.Errorf("inventory of the fixed revision %v, want 4 entries", ids)
	}
}

// TestColdApplyInventoryBeforeWrites: every object a cold apply creates is
// in a status write of the inventory older (by etcd revision) than the
// object, although that write now overlaps the dry-runs.
func TestColdApplyInventoryBeforeWrites(t *testing.T) {
	const count = 40
	files := map[string]string{}
	for i := range count {
		files[fmt.Sprintf("app/cm-%02d.yaml", i)] = configMapYAML(fmt.Sprintf("cm-%02d", i), "k", "1")
	}
	f, sha := newFixture(t, files)
	from := etcdRevision(t, f)
	k := f.kustomization("cold", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	recorded := map[string]string{} // id → the first revision whose inventory has it
	for _, inv := range inventoryVersions(t, f, k, from, etcdRevision(t, f)) {
		for _, id := range inv.ids {
			if _, ok := recorded[id]; !ok {
				recorded[id] = inv.resourceVersion
			}
		}
	}
	for i := range count {
		name := fmt.Sprintf("cm-%02d", i)
		cm := f.configMap(name)
		id := fmt.Sprintf("%s_%s__ConfigMap", f.ns, name)
		if rv, ok := recorded[id]; !ok || !newer(cm.ResourceVersion, rv) {
			t.Errorf("%s created at revision %s, first in the inventory at %q: not before it", name, cm.ResourceVersion, rv)
		}
	}
}

// TestFirstApplyDetectsDriftAndRecordsInOnePatch: the first stage's
// intent carries the "Detecting drift" progress, so a first apply writes
// one status version for both: no version shows the phase without the
// inventory, and the first version with the inventory shows the phase
// (held back, docs/design/0043-coalesced-progress-writes.md, it rides on
// the inventory's write).
func TestFirstApplyDetectsDriftAndRecordsInOnePatch(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("a", "k", "1"), "app/b.yaml": configMapYAML("b", "k", "1")})
	from := etcdRevision(t, f)
	k := f.kustomization("onepatch", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	detecting := 0
	var first *inventoryVersion
	for _, v := range inventoryVersions(t, f, k, from, etcdRevision(t, f)) {
		if strings.HasPrefix(v.reconciling, "Detecting drift for revision main@sha1:"+sha) {
			detecting++
			if len(v.ids) != 2 {
				t.Errorf("version %s shows %q with inventory %v, want both objects", v.resourceVersion, v.reconciling, v.ids)
			}
		}
		if first == nil && len(v.ids) > 0 {
			first = &v
		}
	}
	if detecting != 1 || first == nil || !strings.HasPrefix(first.reconciling, "Detecting drift") {
		t.Errorf("%d versions detecting drift; the first with an inventory shows %+v; want 1, and that one", detecting, first)
	}
}

// inventoriesSince returns the inventory ids of each version k had
// between two etcd revisions.
func inventoriesSince(t *testing.T, f *fixture, k *kustomizev1.Kustomization, from, to string) [][]string {
	t.Helper()
	var out [][]string
	for _, v := range inventoryVersions(t, f, k, from, to) {
		out = append(out, v.ids)
	}
	return out
}

type inventoryVersion struct {
	resourceVersion string
	ids             []string
	reconciling     string // the Reconciling condition's message, if any
}

// inventoryVersions watches k from etcd revision from and returns the
// inventory of each of its versions up to revision to.
func inventoryVersions(t *testing.T, f *fixture, k *kustomizev1.Kustomization, from, to string) []inventoryVersion {
	t.Helper()
	var out []inventoryVersion
	for _, got := range versionsOf(t, f, k, from, 2*time.Second, func(got *kustomizev1.Kustomization) bool { return !newer(to, got.ResourceVersion) }) {
		v := inventoryVersion{resourceVersion: got.ResourceVersion, ids: inventoryIDs(got)}
		if c := conditions.Get(got, meta.ReconcilingCondition); c != nil {
			v.reconciling = c.Message
		}
		out = append(out, v)
	}
	return out
}

// versionsOf watches k from etcd revision from and returns each of its
// versions, up to the first that last accepts, or up to the last before
// nothing came for idle.
func versionsOf(t *testing.T, f *fixture, k *kustomizev1.Kustomization, from string, idle time.Duration,
	last func(*kustomizev1.Kustomization) bool) []*kustomizev1.Kustomization {
	t.Helper()
	wc, err := client.NewWithWatch(f.env.Config, client.Options{Scheme: f.env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.DefaultTimeout)
	defer cancel()
	w, err := wc.Watch(ctx, &kustomizev1.KustomizationList{}, client.InNamespace(k.Namespace),
		client.MatchingFields{"metadata.name": k.Name}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: from}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var out []*kustomizev1.Kustomization
	for {
		select {
		case ev, ok := <-w.ResultChan():
			got, isK := ev.Object.(*kustomizev1.Kustomization)
			if !ok || !isK || ev.Type == watch.Error {
				t.Fatalf("watching %s ended: %v", k.Name, ev.Object)
			}
			out = append(out, got)
			if last(got) {
				return out
			}
		case <-time.After(idle):
			return out
		}
	}
}
