package kustomization

import (
	"strings"
	"testing"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestCELExpressions covers the two CEL hooks: a readyExpr decides a
// dependency instead of the built-in check, and a healthCheckExprs entry
// that does not compile stalls the Kustomization.
func TestCELExpressions(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/a.yaml": configMapYAML("cel-a", "k", "v")})
	rev := "main@sha1:" + sha

	dep := f.kustomization("dep", "./app", nil)
	f.env.Create(t, dep)
	f.waitApplied(dep, rev)

	blocked := f.kustomization("blocked", "./app", func(s *kustomizev1.KustomizationSpec) {
		s.NamePrefix = "blocked-"
		s.DependsOn = []meta.DependencyReference{{Name: "dep", ReadyExpr: "dep.metadata.name == 'something-else'"}}
	})
	allowed := f.kustomization("allowed", "./app", func(s *kustomizev1.KustomizationSpec) {
		s.NamePrefix = "allowed-"
		s.DependsOn = []meta.DependencyReference{{Name: "dep", ReadyExpr: "dep.status.lastAppliedRevision == self.status.?lastAttemptedRevision.orValue(dep.status.lastAppliedRevision)"}}
	})
	badHealth := f.kustomization("bad-health", "./app", func(s *kustomizev1.KustomizationSpec) {
		s.NamePrefix = "bad-"
		s.HealthCheckExprs = []meta.HealthCheckExpressions{{APIVersion: "v1", Kind: "ConfigMap", Current: "data.k =="}}
	})
	f.env.Create(t, blocked, allowed, badHealth)

	ready := f.waitFailed(blocked, "", meta.DependencyNotReadyReason)
	if want := "dependency '" + f.ns + "/dep' is not ready according to readyExpr eval"; ready.Message != want {
		t.Errorf("blocked: %q, want %q", ready.Message, want)
	}
	f.waitApplied(allowed, rev)

	ready = f.waitFailed(badHealth, "", meta.InvalidCELExpressionReason)
	if !strings.Contains(ready.Message, "current") || !conditions.IsTrue(badHealth, meta.StalledCondition) {
		t.Errorf("bad-health: %q, stalled %v", ready.Message, conditions.IsTrue(badHealth, meta.StalledCondition))
	}
}
