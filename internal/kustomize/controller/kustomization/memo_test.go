package kustomization

import (
	"context"
	"testing"

	"github.com/weir-gitops/weir/api/meta"
)

// TestDriftIsCorrectedAfterNoOpReconciles runs reconciles that change
// nothing (their objects count unchanged without a dry-run, from the
// memo), then edits one object by hand and deletes another: the next
// reconcile must find both and put them back, as one that dry-runs every
// object does.
func TestDriftIsCorrectedAfterNoOpReconciles(t *testing.T) {
	f, sha := newFixture(t, map[string]string{
		"app/a.yaml": configMapYAML("a", "k", "from-git"),
		"app/b.yaml": configMapYAML("b", "k", "from-git"),
		"app/c.yaml": configMapYAML("c", "k", "from-git"),
	})
	k := f.kustomization("app", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	versions := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		versions[n] = f.configMap(n).ResourceVersion
	}
	for range 2 {
		f.env.RequestReconcile(t, k)
		f.env.WaitForReady(t, k, nil)
	}
	for n, rv := range versions {
		if got := f.configMap(n).ResourceVersion; got != rv {
			t.Errorf("ConfigMap %s written by a no-op reconcile (resourceVersion %s, was %s)", n, got, rv)
		}
	}

	cm := f.configMap("a")
	cm.Data["k"] = "edited-by-hand"
	if err := f.env.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	if err := f.env.Client.Delete(context.Background(), f.configMap("c")); err != nil {
		t.Fatal(err)
	}
	f.env.RequestReconcile(t, k)
	f.env.WaitForReady(t, k, nil)
	if got := f.configMap("a").Data["k"]; got != "from-git" {
		t.Errorf("after reconcile a.k = %q, want the value from Git", got)
	}
	if f.absent("c") {
		t.Error("the deleted ConfigMap c was not created again")
	}
	if got := f.configMap("b").ResourceVersion; got != versions["b"] {
		t.Errorf("ConfigMap b written (resourceVersion %s, was %s)", got, versions["b"])
	}
	f.env.AssertEvent(t, k, meta.ProgressingReason, "ConfigMap/"+f.ns+"/a configured\nConfigMap/"+f.ns+"/c created")
}
