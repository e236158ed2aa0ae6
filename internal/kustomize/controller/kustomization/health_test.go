package kustomization

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
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
	waitProgress(t, f, k, "Running health checks for revision main@sha1:"+sha+" with a timeout of 30s")
	if h := conditions.Get(k, meta.HealthyCondition); h == nil || h.Status != metav1.ConditionUnknown || h.Reason != meta.ProgressingReason {
		t.Errorf("Healthy while the check runs = %+v, want Unknown/Progressing", h)
	}
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

// waitProgress waits until k shows, while its reconcile runs, what
// reconcile.ProgressUnknown writes: Reconciling=True and Ready=Unknown,
// reason Progressing, with msg.
func waitProgress(t *testing.T, f *fixture, k *kustomizev1.Kustomization, msg string) {
	t.Helper()
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
			return false, err.Error()
		}
		rec, ready := conditions.Get(k, meta.ReconcilingCondition), conditions.Get(k, meta.ReadyCondition)
		if rec == nil || ready == nil {
			return false, "no Reconciling or Ready condition"
		}
		ok := rec.Status == metav1.ConditionTrue && rec.Reason == meta.ProgressingReason && rec.Message == msg &&
			ready.Status == metav1.ConditionUnknown && ready.Reason == meta.ProgressingReason && ready.Message == msg
		return ok, "Reconciling " + string(rec.Status) + " " + rec.Message + "; Ready " + string(ready.Status) + " " + ready.Message
	})
}

// deploymentYAML is a Deployment of one replica the kwok node runs.
func deploymentYAML(name string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
spec:
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
      containers:
      - name: app
        image: example.com/app:1
`
}

// TestHealthCheckWithoutAPIVersionMeansAppsV1 writes spec.healthChecks as
// `flux create kustomization --health-check=Deployment/frontend.<ns>` does,
// with no apiVersion: the check finds the Deployment (apps/v1, as in Flux)
// and the Kustomization becomes Ready and Healthy.
func TestHealthCheckWithoutAPIVersionMeansAppsV1(t *testing.T) {
	t.Parallel()
	f, sha := newFixture(t, map[string]string{"app/frontend.yaml": deploymentYAML("frontend")})
	k := f.kustomization("app", "./app", func(s *kustomizev1.KustomizationSpec) {
		s.HealthChecks = []meta.NamespacedObjectKindReference{{Kind: "Deployment", Name: "frontend", Namespace: f.ns}}
	})
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)
	if h := conditions.Get(k, meta.HealthyCondition); h == nil || h.Status != metav1.ConditionTrue || h.Reason != meta.SucceededReason {
		t.Errorf("Healthy = %+v, want True/Succeeded", h)
	}
}

func TestHealthCheckObjects(t *testing.T) {
	tests := []struct {
		name    string
		ref     meta.NamespacedObjectKindReference
		group   string
		stalled bool
	}{
		{"no apiVersion means apps/v1", meta.NamespacedObjectKindReference{Kind: "Deployment", Name: "a", Namespace: "n"}, "apps", false},
		{"core group", meta.NamespacedObjectKindReference{APIVersion: "v1", Kind: "ConfigMap", Name: "a", Namespace: "n"}, "", false},
		{"custom group", meta.NamespacedObjectKindReference{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Name: "a", Namespace: "n"}, "helm.toolkit.fluxcd.io", false},
		{"unparsable apiVersion stalls", meta.NamespacedObjectKindReference{APIVersion: "a/b/c", Kind: "X", Name: "a"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := healthCheckObjects([]meta.NamespacedObjectKindReference{tt.ref})
			if tt.stalled {
				if !errs.IsStalling(err) {
					t.Fatalf("err = %v, want a stall", err)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0].GroupKind.Group != tt.group || got[0].GroupKind.Kind != tt.ref.Kind ||
				got[0].Name != tt.ref.Name || got[0].Namespace != tt.ref.Namespace {
				t.Errorf("healthCheckObjects = %+v, %v; want group %q", got, err, tt.group)
			}
		})
	}
}
