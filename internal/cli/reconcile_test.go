package cli_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

const fetchedRev = "main@sha1:67e2c98a60dc92283531412a9e604dd4bae005a9"

// onRequest answers each new reconcile request with status, echoing the
// request token in lastHandledReconcileAt as Flux's controllers do.
func onRequest(status map[string]any) func(u *unstructured.Unstructured) map[string]any {
	return func(u *unstructured.Unstructured) map[string]any {
		token := u.GetAnnotations()[meta.ReconcileRequestAnnotation]
		if token == "" || token == kinds.LastHandledReconcileAt(u) {
			return nil
		}
		s := deepCopyMap(status)
		s["lastHandledReconcileAt"] = token
		return s
	}
}

func TestReconcile(t *testing.T) {
	env := testenv.Get(t)
	ns, ns2 := env.Namespace(t), env.Namespace(t)
	applyFixture(t, "reconcile/objects.yaml", ns, ns2)
	fakeController(t, kinds.GitRepository, ns2, "podinfo", onRequest(map[string]any{
		"artifact": map[string]any{
			"path": "gitrepository/x.tar.gz", "url": "http://127.0.0.1/x.tar.gz", "revision": fetchedRev,
			"digest": "sha256:7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b", "lastUpdateTime": "2026-11-01T10:00:00Z",
		},
		"conditions": readyCondition("Succeeded", "stored artifact for revision '"+fetchedRev+"'"),
	}))
	fakeController(t, kinds.Kustomization, ns, "apps", onRequest(map[string]any{
		"lastAppliedRevision": fetchedRev,
		"conditions":          readyCondition("ReconciliationSucceeded", "Applied revision: "+fetchedRev),
	}))
	fakeController(t, kinds.Kustomization, ns, "broken", onRequest(map[string]any{
		"conditions": failedCondition("BuildFailed", "kustomization path not found: stat /tmp/kustomization-1/missing: no such file or directory"),
	}))

	artifact := func(rev string) map[string]any {
		return map[string]any{"path": "x.tgz", "url": "http://127.0.0.1/x.tgz", "revision": rev,
			"digest": "sha256:7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b", "lastUpdateTime": "2026-11-01T10:00:00Z"}
	}
	fakeController(t, kinds.HelmRepository, ns2, "bitnami", onRequest(map[string]any{
		"artifact":   artifact("sha256:5e2c7a9b8c1d0e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f"),
		"conditions": readyCondition("Succeeded", "stored artifact"),
	}))
	fakeController(t, kinds.HelmChart, ns2, ns+"-redis", onRequest(map[string]any{
		"artifact": artifact("17.3.14"), "conditions": readyCondition("ChartPullSucceeded", "pulled 'redis' chart with version '17.3.14'"),
	}))
	// The HelmRelease handles --force only with the request's token, as
	// helm-controller does, and says so in status.lastHandledForceAt.
	fakeController(t, kinds.HelmRelease, ns, "redis", func(u *unstructured.Unstructured) map[string]any {
		s := onRequest(map[string]any{
			"lastAttemptedRevision": "17.3.14",
			"conditions":            readyCondition("UpgradeSucceeded", "Helm upgrade succeeded for release "+ns+"/redis.v2 with chart redis@17.3.14"),
		})(u)
		if s != nil {
			if ann := u.GetAnnotations(); ann[meta.ForceRequestAnnotation] == ann[meta.ReconcileRequestAnnotation] {
				s["lastHandledForceAt"] = ann[meta.ForceRequestAnnotation]
			}
		}
		return s
	})

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"source git", []string{"reconcile", "source", "git", "podinfo", "-n", ns2}, 0, "reconcile/source-git.golden"},
		{"kustomization with source", []string{"reconcile", "ks", "apps", "--with-source"}, 0, "reconcile/ks-with-source.golden"},
		{"kustomization again", []string{"reconcile", "kustomization", "apps"}, 0, "reconcile/ks.golden"},
		{"failure", []string{"reconcile", "ks", "broken"}, 1, "reconcile/ks-failed.golden"},
		{"suspended", []string{"reconcile", "ks", "paused"}, 1, "reconcile/ks-suspended.golden"},
		{"missing", []string{"reconcile", "ks", "missing"}, 1, "reconcile/ks-missing.golden"},
		{"static", []string{"reconcile", "source", "helm", "charts"}, 0, "reconcile/static.golden"},
		{"no controller", []string{"reconcile", "source", "git", "orphan", "--timeout", "3s"}, 1, "reconcile/timeout.golden"},
		{"name required", []string{"reconcile", "ks"}, 1, "reconcile/name-required.golden"},
		{"helmrelease with source, forced", []string{"reconcile", "hr", "redis", "--with-source", "--force"}, 0, "reconcile/hr-with-source.golden"},
	}
	for _, s := range steps {
		args := s.args
		if !contains(args, "-n") {
			args = append(args, "-n", ns)
		}
		res := weir(t, args...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns, ns2)
	}

	hr := kinds.HelmRelease.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "redis"), hr); err != nil {
		t.Fatal(err)
	}
	if ann := hr.GetAnnotations(); ann[meta.ForceRequestAnnotation] == "" || ann[meta.ForceRequestAnnotation] != ann[meta.ReconcileRequestAnnotation] {
		t.Errorf("--force: annotations %v, want forceAt equal to requestedAt", ann)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
