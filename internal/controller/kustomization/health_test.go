package kustomization

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/testenv"
)

// TestHealthCheckFailureNamesTheObject lists, in spec.healthChecks, a
// Deployment no node can run (its nodeSelector matches nothing): the
// apply succeeds, the health check times out after spec.timeout (30 s, the
// floor), and Ready and Healthy say which object is not ready and why.
func TestHealthCheckFailureNamesTheObject(t *testing.T) {
	t.Parallel()
	f, sha := newFixture(t, map[string]string{
		"app/stuck.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: stuck
spec:
  selector:
    matchLabels: {app: stuck}
  template:
    metadata:
      labels: {app: stuck}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers:
      - name: app
        image: example.com/app:1
`,
		"app/cm.yaml": configMapYAML("healthy", "k", "v"),
	})
	k := f.kustomization("app", "./app", func(s *kustomizev1.KustomizationSpec) {
		s.HealthChecks = []meta.NamespacedObjectKindReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "stuck", Namespace: f.ns}}
	})
	f.env.Create(t, k)
	ready := f.waitFailedWithin(k, "main@sha1:"+sha, meta.HealthCheckFailedReason, 2*testenv.DefaultTimeout)
	want := "timeout waiting for: [Deployment/" + f.ns + "/stuck status: 'InProgress'"
	if !strings.HasPrefix(ready.Message, want) {
		t.Errorf("Ready message = %q, want prefix %q", ready.Message, want)
	}
	if h := conditions.Get(k, meta.HealthyCondition); h == nil || h.Status != metav1.ConditionFalse || h.Reason != meta.HealthCheckFailedReason {
		t.Errorf("Healthy = %+v", h)
	}
	if k.Status.LastAppliedRevision != "" || k.Status.Inventory == nil || len(k.Status.Inventory.Entries) != 2 {
		t.Errorf("applied %q, inventory %+v: the apply's inventory is kept, the revision is not counted as applied",
			k.Status.LastAppliedRevision, k.Status.Inventory)
	}
	f.configMap("healthy")
}
