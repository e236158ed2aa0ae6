package objectstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

const ks = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system, generation: 2}\n"

func cond(typ, status string) string {
	return "  - {type: " + typ + ", status: \"" + status + "\", reason: R" + typ + ", message: m" + typ +
		", lastTransitionTime: \"2026-01-02T03:04:05Z\"}\n"
}

func TestOf(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"suspended wins", ks + "spec: {suspend: true}\nstatus:\n  conditions:\n" + cond("Stalled", "True"), Suspended},
		{"stalled", ks + "status:\n  observedGeneration: 2\n  conditions:\n" + cond("Ready", "False") + cond("Stalled", "True"), Stalled},
		{"failing", ks + "status:\n  observedGeneration: 2\n  conditions:\n" + cond("Ready", "False"), Failing},
		{"waiting for a dependency", ks + "status:\n  observedGeneration: 2\n  conditions:\n" +
			"  - {type: Ready, status: \"False\", reason: DependencyNotReady, message: \"dependency 'flux-system/infra' is not ready\"}\n", Waiting},
		{"failing before behind", ks + "status:\n  observedGeneration: 1\n  conditions:\n" + cond("Ready", "False"), Failing},
		{"reconciling", ks + "status:\n  observedGeneration: 2\n  conditions:\n" + cond("Ready", "True") + cond("Reconciling", "True"), Reconciling},
		{"ready unknown", ks + "status:\n  observedGeneration: 2\n  conditions:\n" + cond("Ready", "Unknown"), Reconciling},
		{"generation behind", ks + "status:\n  observedGeneration: 1\n  conditions:\n" + cond("Ready", "True"), Reconciling},
		{"ready", ks + "status:\n  observedGeneration: 2\n  conditions:\n" + cond("Ready", "True"), Ready},
		{"no status", ks, Unknown},
		{"static alert", "apiVersion: notification.toolkit.fluxcd.io/v1beta3\nkind: Alert\nmetadata: {name: a}\n", Ready},
		{"oci helm repository", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: a}\nspec: {type: oci}\n", Ready},
		{"helm repository without status", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: a}\n", Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(object(t, tt.yaml)); got != tt.want {
				t.Errorf("Of = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLive(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", Current},
		{"deployment rolling", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, generation: 2}\nspec: {replicas: 1}\nstatus: {observedGeneration: 1}\n", InProgress},
		{"toolkit object", ks + "status:\n  observedGeneration: 2\n  conditions:\n" + cond("Ready", "False"), Failing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Live(object(t, tt.yaml)); got != tt.want {
				t.Errorf("Live = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	u := object(t, `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
  generation: 2
  labels: {sharding.fluxcd.io/key: shard1}
  annotations: {suspend.toolkit.fluxcd.io/reason: "freeze for the release"}
  managedFields:
  - {manager: kustomize-controller, operation: Apply, time: "2026-01-01T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:suspend": {}}}}
  - {manager: flux-client-side-apply, operation: Update, time: "2026-01-02T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:suspend": {}}}}
  - {manager: kubectl, operation: Update, time: "2026-01-03T00:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:path": {}}}}
spec: {suspend: true}
status:
  observedGeneration: 2
  lastAppliedRevision: main@sha1:abc
  conditions:
`+cond("Ready", "False")+cond("Stalled", "True"))
	want := Summary{
		Kind: "Kustomization", APIVersion: "kustomize.toolkit.fluxcd.io/v1", Namespace: "flux-system", Name: "apps",
		State: Suspended, Reason: "RStalled", Message: "mStalled", Revision: "main@sha1:abc",
		Suspended: true, SuspendedBy: "flux-client-side-apply", SuspendReason: "freeze for the release",
		LastTransition: "2026-01-02T03:04:05Z", Shard: "shard1",
	}
	if diff := cmp.Diff(want, Summarize(u)); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}

func TestSummarizeWaiting(t *testing.T) {
	u := object(t, ks+"status:\n  observedGeneration: 2\n  conditions:\n"+
		"  - {type: Ready, status: \"False\", reason: DependencyNotReady, lastTransitionTime: \"2026-01-02T03:04:05Z\",\n"+
		"     message: \"dependency 'flux-system/infra' is not ready; dependency 'shared/crds' is not ready\"}\n")
	got := Summarize(u)
	want := []Ref{{Kind: "Kustomization", Namespace: "flux-system", Name: "infra"}, {Kind: "Kustomization", Namespace: "shared", Name: "crds"}}
	if got.State != Waiting || !cmp.Equal(got.WaitingFor, want) {
		t.Errorf("state %s, waiting for %v; want waiting for %v", got.State, got.WaitingFor, want)
	}
}

func TestRevision(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"kustomization", "status: {lastAppliedRevision: main@sha1:1, lastAttemptedRevision: main@sha1:2}", "main@sha1:1"},
		{"source", "status: {artifact: {revision: v1@sha256:1}}", "v1@sha256:1"},
		{"helm release history", "status: {history: [{chartVersion: 1.2.3}, {chartVersion: 1.2.2}], lastAttemptedRevision: 1.2.4}", "1.2.3"},
		{"kustomization never applied", "status: {lastAttemptedRevision: main@sha1:2}", ""},
		{"image policy", "status: {latestRef: {name: ghcr.io/app, tag: 1.0.0}}", "ghcr.io/app:1.0.0"},
		{"none", "status: {}", ""},
	}
	hr := object(t, "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nstatus: {lastAttemptedRevision: 1.2.4}")
	if got := Revision(hr); got != "1.2.4" {
		t.Errorf("Revision of a HelmRelease before its first release = %q, want its last attempted chart version", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Revision(object(t, "apiVersion: v1\nkind: Kustomization\n"+tt.yaml)); got != tt.want {
				t.Errorf("Revision = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestConditionsFastPath: a well-formed condition reads as the
// converter reads it; anything else (a wrong type, a bad time, an unknown
// field) is left to the converter, which skips what it cannot decode.
func TestConditionsFastPath(t *testing.T) {
	tests := []map[string]any{
		{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "m", "observedGeneration": int64(3),
			"lastTransitionTime": "2026-01-01T10:00:00Z"},
		{"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T12:00:00+02:00"},
		{"type": "Stalled"},
		{"type": "Ready", "observedGeneration": float64(2), "lastTransitionTime": "2026-01-01T10:00:00Z"},
		{"type": "Ready", "lastTransitionTime": "yesterday"},
		{"type": "Ready", "status": nil},
		{"type": "Ready", "extra": "x"},
		{"type": int64(1)},
	}
	for i, m := range tests {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{m}}}}
		var want []metav1.Condition
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err == nil {
			want = append(want, c)
		}
		if diff := cmp.Diff(want, Conditions(u), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%d %v (-converter +Conditions):\n%s", i, m, diff)
		}
	}
}
