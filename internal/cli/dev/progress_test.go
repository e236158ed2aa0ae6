package dev

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
)

const rev = "main@sha1:1111111111111111111111111111111111111111"

func kustomization(name string, generation int64, applied string, ready *metav1.Condition) kustomizev1.Kustomization {
	k := kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Generation: generation}}
	k.Spec.SourceRef = kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: syncName}
	k.Status.LastAppliedRevision = applied
	if ready != nil {
		k.Status.Conditions = []metav1.Condition{*ready}
	}
	return k
}

// readyCond is a Ready condition observed at generation 1.
func readyCond(status metav1.ConditionStatus, reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: meta.ReadyCondition, Status: status, ObservedGeneration: 1, Reason: reason, Message: message}
}

func TestState(t *testing.T) {
	tests := []struct {
		name string
		k    kustomizev1.Kustomization
		want string
	}{
		{"not reconciled yet", kustomization("apps", 1, "", nil), "◎ waiting to be reconciled"},
		{"ready", kustomization("apps", 1, rev, readyCond(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied revision: "+rev)),
			"✔ Applied revision: " + rev},
		{"ready at an older generation", kustomization("apps", 2, rev, readyCond(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied revision: "+rev)),
			"◎ ReconciliationSucceeded: Applied revision: " + rev},
		{"dependency", kustomization("apps", 1, "", readyCond(metav1.ConditionFalse, meta.DependencyNotReadyReason, "dependency 'flux-system/infrastructure' is not ready")),
			"◎ waiting for dependency 'flux-system/infrastructure' (not ready)"},
		{"dependency behind", kustomization("apps", 1, "", readyCond(metav1.ConditionFalse, meta.DependencyNotReadyReason, "dependency 'flux-system/infrastructure' revision is not up to date")),
			"◎ waiting for dependency 'flux-system/infrastructure' (revision is not up to date)"},
		{"failed", kustomization("apps", 1, "", readyCond(metav1.ConditionFalse, "BuildFailed", "kustomize build failed")),
			"✗ BuildFailed: kustomize build failed"},
		{"source not fetched yet", kustomization("flux-system", 1, "", readyCond(metav1.ConditionFalse, meta.ArtifactFailedReason, "Source artifact not found, retrying in 30s")),
			"◎ waiting for the source: Source artifact not found, retrying in 30s"},
		{"artifact being replaced", kustomization("flux-system", 1, "", readyCond(metav1.ConditionFalse, meta.ArtifactFailedReason, "Source is not ready, artifact not found, retrying in 30s")),
			"◎ waiting for the source: Source is not ready, artifact not found, retrying in 30s"},
		{"source not created yet", kustomization("apps", 1, "", readyCond(metav1.ConditionFalse, meta.ArtifactFailedReason, "Source 'GitRepository/flux-system/fleet' not found")),
			"◎ waiting for the source: Source 'GitRepository/flux-system/fleet' not found"},
		{"path missing from the artifact", kustomization("apps", 1, "", readyCond(metav1.ConditionFalse, meta.ArtifactFailedReason, "kustomization path not found: stat ./apps: no such file or directory")),
			"✗ ArtifactFailed: kustomization path not found: stat ./apps: no such file or directory"},
		{"progressing", kustomization("apps", 1, "", readyCond(metav1.ConditionUnknown, meta.ProgressingReason, "Reconciliation in progress")),
			"◎ Progressing: Reconciliation in progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			symbol, text := state(&tt.k, tt.k.Generation)
			if got := symbol + " " + text; got != tt.want {
				t.Errorf("state = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConverged(t *testing.T) {
	source := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: syncName, Namespace: namespace, Generation: 1}}
	source.Status.Artifact = &meta.Artifact{Revision: rev}
	source.Status.Conditions = []metav1.Condition{*readyCond(metav1.ConditionTrue, meta.SucceededReason, "stored")}
	ok := func(name string) kustomizev1.Kustomization {
		return kustomization(name, 1, rev, readyCond(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied"))
	}
	behind := kustomization("apps", 1, "main@sha1:0000000000000000000000000000000000000000",
		readyCond(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied"))
	other := ok("elsewhere")
	other.Spec.SourceRef.Name = "another-repo"
	other.Status.LastAppliedRevision = ""

	current := map[string][]objectState{"apps": {
		{name: "Service/apps/podinfo", current: true, message: "Service is ready"},
		{name: "Deployment/apps/podinfo", current: true, message: "Deployment is available. Replicas: 2"},
	}}
	rollingOut := map[string][]objectState{"apps": {
		{name: "Service/apps/podinfo", current: true, message: "Service is ready"},
		{name: "Deployment/apps/podinfo", message: "Updated: 2/3"},
	}}
	tests := []struct {
		name    string
		ks      []kustomizev1.Kustomization
		objects map[string][]objectState
		waiting string
	}{
		{"all ready", []kustomizev1.Kustomization{ok(syncName), ok("infrastructure"), ok("apps")}, current, ""},
		{"one behind", []kustomizev1.Kustomization{ok(syncName), ok("infrastructure"), behind}, current, "apps"},
		{"no sync yet", nil, nil, syncName},
		{"other sources do not count", []kustomizev1.Kustomization{ok(syncName), other}, nil, ""},
		{"an object still rolling out", []kustomizev1.Kustomization{ok(syncName), ok("apps")}, rollingOut,
			"apps (Deployment/apps/podinfo: Updated: 2/3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &snapshot{source: source, kustomizations: tt.ks, objects: tt.objects}
			done, waiting := s.converged(rev)
			if got := strings.Join(waiting, ", "); got != tt.waiting || done != (tt.waiting == "") {
				t.Errorf("converged = %v, waiting %q; want waiting %q", done, got, tt.waiting)
			}
		})
	}
}

// TestDependencyOrder: a poll prints each Kustomization after those it
// dependsOn (the example's apps after infrastructure although "apps" sorts
// first), else by creation and name; a cycle keeps creation order.
func TestDependencyOrder(t *testing.T) {
	k := func(name string, created int, deps ...string) kustomizev1.Kustomization {
		k := kustomization(name, 1, "", nil)
		k.CreationTimestamp = metav1.Unix(int64(created), 0)
		for _, d := range deps {
			k.Spec.DependsOn = append(k.Spec.DependsOn, meta.DependencyReference{Name: d})
		}
		return k
	}
	for _, tt := range []struct {
		name string
		in   []kustomizev1.Kustomization
		want string
	}{
		{"the example", []kustomizev1.Kustomization{k("apps", 2, "infrastructure"), k("infrastructure", 2, "flux-system"), k("flux-system", 1)},
			"flux-system infrastructure apps"},
		{"no edges: creation, then name", []kustomizev1.Kustomization{k("b", 2), k("a", 2), k("c", 1)}, "c a b"},
		{"a dependency that is not listed", []kustomizev1.Kustomization{k("b", 1, "elsewhere"), k("a", 1)}, "a b"},
		{"a chain against creation order", []kustomizev1.Kustomization{k("first", 1, "second"), k("second", 2, "third"), k("third", 3)},
			"third second first"},
		{"a cycle", []kustomizev1.Kustomization{k("y", 2, "x"), k("x", 1, "y"), k("free", 3)}, "free x y"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, k := range dependencyOrder(tt.in) {
				names = append(names, k.Name)
			}
			if got := strings.Join(names, " "); got != tt.want {
				t.Errorf("order %q, want %q", got, tt.want)
			}
		})
	}
}
