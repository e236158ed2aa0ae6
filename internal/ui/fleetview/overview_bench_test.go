package fleetview

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// syntheticFleet is n Kustomizations as the API server lists them for
// bench/ui: managed fields of three managers, a Ready condition, a
// dependsOn chain, revisions and a 20-entry inventory; every 50th
// suspended, every 20th failing.
func syntheticFleet(n int) []unstructured.Unstructured {
	const rev = "main@sha1:2c83ed64161993761f84ced0b182cfaed4edd56b"
	out := make([]unstructured.Unstructured, n)
	for i := range out {
		name := fmt.Sprintf("ks-%04d", i)
		entries := make([]any, 20)
		for j := range entries {
			entries[j] = map[string]any{"id": fmt.Sprintf("apps_%s-cm-%02d__ConfigMap", name, j), "v": "v1"}
		}
		status, reason := "True", "ReconciliationSucceeded"
		if i%20 == 0 {
			status, reason = "False", "BuildFailed"
		}
		spec := map[string]any{
			"interval": "1h", "path": fmt.Sprintf("./apps/%04d", i), "prune": true,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet"},
		}
		if i%10 != 0 {
			spec["dependsOn"] = []any{map[string]any{"name": fmt.Sprintf("ks-%04d", i-1)}}
		}
		if i%50 == 0 {
			spec["suspend"] = true
		}
		managed := []any{
			map[string]any{"manager": "weir", "operation": "Update", "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
				"time": "2026-01-01T10:00:00Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:interval": map[string]any{}, "f:path": map[string]any{}, "f:suspend": map[string]any{}}}},
			map[string]any{"manager": "kustomize-controller", "operation": "Update", "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
				"time": "2026-01-01T10:01:00Z", "fieldsType": "FieldsV1", "subresource": "status",
				"fieldsV1": map[string]any{"f:status": map[string]any{"f:conditions": map[string]any{}, "f:inventory": map[string]any{}}}},
		}
		out[i] = unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": name, "namespace": "apps", "generation": int64(1),
				"uid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i), "resourceVersion": "12345",
				"creationTimestamp": "2026-01-01T09:59:00Z", "managedFields": managed},
			"spec": spec,
			"status": map[string]any{
				"observedGeneration": int64(1), "lastAppliedRevision": rev, "lastAttemptedRevision": rev,
				"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": reason,
					"message": "Applied revision: " + rev, "lastTransitionTime": "2026-01-01T10:01:00Z", "observedGeneration": int64(1)}},
				"inventory": map[string]any{"entries": entries},
			},
		}}
	}
	return out
}

// BenchmarkOverview is /api/overview's work after the lists: every
// object's Summary, then the overview of them (no filter).
func BenchmarkOverview(b *testing.B) {
	objs := syntheticFleet(1000)
	b.ReportAllocs()
	for b.Loop() {
		o := NewOverview(Summaries(objs), Filter{})
		if len(o.Objects) != len(objs) {
			b.Fatalf("%d objects in the overview, want %d", len(o.Objects), len(objs))
		}
	}
}
