package cli_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// TestArtifactGenerator runs the read-only verbs on ArtifactGenerators and
// ExternalArtifacts as source-watcher writes them: a generator splitting a
// monorepo into two ExternalArtifacts, read by two Kustomizations and a
// HelmRelease, and a generator paused by its reconcile annotation.
func TestArtifactGenerator(t *testing.T) {
	// Flux prints condition times in local time; the golden files hold UTC.
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })

	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "artifact/objects.yaml", ns)
	recordEvents(t, ns)

	runGoldenCases(t, ns, []goldenCase{
		{"get artifact generators", []string{"get", "artifact", "generators"}, "artifact/get-generators.golden", 0},
		{"get artifacts generator by name", []string{"get", "artifacts", "generator", "flux-system"}, "artifact/get-generator.golden", 0},
		{"get generators wide", []string{"get", "artifact", "generators", "-o", "wide"}, "artifact/get-generators-wide.golden", 0},
		{"get generator yaml", []string{"get", "artifact", "generator", "flux-system", "-o", "yaml"}, "artifact/get-generator.yaml.golden", 0},
		{"get source external", []string{"get", "source", "external"}, "artifact/get-external.golden", 0},
		{"get sources external wide", []string{"get", "sources", "external", "-o", "wide"}, "artifact/get-external-wide.golden", 0},
		{"get external json", []string{"get", "source", "external", "apps", "-o", "json"}, "artifact/get-external.json.golden", 0},
		{"get external ready=false", []string{"get", "source", "external", "--status-selector", "ready=false"}, "artifact/get-external-none.golden", 0},
		{"get sources all", []string{"get", "sources", "all"}, "artifact/get-sources-all.golden", 0},
		{"get all", []string{"get", "all"}, "artifact/get-all.golden", 0},
		{"get all names", []string{"get", "all", "-o", "name"}, "artifact/get-all-name.golden", 0},
		{"export generator", []string{"export", "artifact", "generator", "flux-system"}, "artifact/export-generator.golden", 0},
		{"export generators", []string{"export", "artifact", "generator", "--all"}, "artifact/export-generators.golden", 0},
		{"export external", []string{"export", "source", "external", "--all"}, "artifact/export-external.golden", 0},
		{"export generator missing", []string{"export", "artifact", "generator", "missing"}, "artifact/export-missing.golden", 1},
		{"tree generator", []string{"tree", "artifact", "generator", "flux-system"}, "artifact/tree-generator.golden", 0},
		{"tree generator json", []string{"tree", "artifact", "generator", "flux-system", "-o", "json"}, "artifact/tree-generator.json.golden", 0},
		{"tree generator without inventory", []string{"tree", "artifact", "generator", "paused"}, "artifact/tree-paused.golden", 0},
		{"tree generator missing", []string{"tree", "artifact", "generator", "missing"}, "artifact/tree-missing.golden", 1},
		{"trace through the ExternalArtifact", []string{"trace", "configmap", "app-settings"}, "artifact/trace-ks.golden", 0},
		{"trace a chart from an ExternalArtifact", []string{"trace", "cm/podinfo-values"}, "artifact/trace-hr.golden", 0},
		{"events for a generator", []string{"events", "--for", "ArtifactGenerator/flux-system"}, "artifact/events.golden", 0},
		{"tree ks through the generator", []string{"tree", "ks", "flux-system", "--compact"}, "artifact/tree-ks.golden", 0},
	})
}

// TestArtifactGeneratorSuspendResumeReconcile changes generators as the
// flux CLI does: suspend and resume through the
// source.extensions.fluxcd.io/reconcile annotation (the kind has no
// spec.suspend), reconcile through reconcile.fluxcd.io/requestedAt, with a
// stand-in for source-watcher answering requests.
func TestArtifactGeneratorSuspendResumeReconcile(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "artifact/objects.yaml", ns)
	generated := map[string]any{
		"conditions": readyCondition(meta.SucceededReason, "reconciliation succeeded, generated 2 artifact(s)"),
	}
	fakeController(t, kinds.ArtifactGenerator, ns, "flux-system", onRequest(generated))
	const appsRev = "latest@sha256:7e3f1a6b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
	fakeController(t, kinds.Kustomization, ns, "apps", onRequest(map[string]any{
		"lastAppliedRevision": appsRev,
		"conditions":          readyCondition(meta.ReconciliationSucceededReason, "Applied revision: "+appsRev),
	}))
	fakeController(t, kinds.ArtifactGenerator, ns, "paused", func(u *unstructured.Unstructured) map[string]any {
		if kinds.Suspended(u) || kinds.ObservedGeneration(u) > 0 {
			return nil
		}
		return map[string]any{"conditions": readyCondition(meta.SucceededReason, "reconciliation succeeded, generated 1 artifact(s)")}
	})

	runGoldenCases(t, ns, []goldenCase{
		{"reconcile", []string{"reconcile", "artifact", "generator", "flux-system"}, "artifact/reconcile.golden", 0},
		{"reconcile ks with its ExternalArtifact", []string{"reconcile", "ks", "apps", "--with-source"}, "artifact/reconcile-ks-with-source.golden", 0},
		{"suspend", []string{"suspend", "artifact", "generator", "flux-system"}, "artifact/suspend.golden", 0},
		{"get shows it suspended", []string{"get", "artifact", "generators"}, "artifact/get-after-suspend.golden", 0},
		{"reconcile refused while suspended", []string{"reconcile", "artifact", "generator", "flux-system"}, "artifact/reconcile-suspended.golden", 1},
		{"resume many does not wait", []string{"resume", "artifact", "generator", "flux-system", "paused"}, "artifact/resume-many.golden", 0},
		{"suspend all", []string{"suspend", "artifact", "generator", "--all"}, "artifact/suspend-all.golden", 0},
		{"resume one waits", []string{"resume", "artifact", "generator", "paused"}, "artifact/resume-one.golden", 0},
	})

	// An ExternalArtifact is its producer's to change: as in the flux CLI,
	// no verb suspends, resumes or reconciles it.
	for _, verb := range []string{"suspend", "resume", "reconcile"} {
		res := weir(t, verb, "source", "--help")
		if !strings.Contains(res.Stdout, "\n  git ") || strings.Contains(res.Stdout, "external") {
			t.Errorf("`%s source` should offer git and not external:\n%s", verb, res.Stdout)
		}
	}

	u := kinds.ArtifactGenerator.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "flux-system"), u); err != nil {
		t.Fatal(err)
	}
	if got := u.GetAnnotations()[sourceextensionsv1beta1.ReconcileAnnotation]; got != sourceextensionsv1beta1.DisabledValue {
		t.Errorf("after suspend --all, %s = %q, want %q", sourceextensionsv1beta1.ReconcileAnnotation, got, sourceextensionsv1beta1.DisabledValue)
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "suspend"); has {
		t.Errorf("suspend wrote spec.suspend on an ArtifactGenerator: %v", u.Object["spec"])
	}
	if u.GetAnnotations()[meta.ReconcileRequestAnnotation] == "" || kinds.LastHandledReconcileAt(u) == "" {
		t.Errorf("reconcile left no request or no handled request: %v", u.GetAnnotations())
	}
}

// recordEvents writes the Events source-watcher would have recorded on the
// generator, and one on a Kustomization that `events --for` the generator
// leaves out.
func recordEvents(t *testing.T, ns string) {
	t.Helper()
	event(t, ns, "ag1", kinds.ArtifactGenerator.Kind, "flux-system", "Normal", meta.SucceededReason,
		"reconciliation succeeded, generated 2 artifact(s)", 20*time.Minute, 10*time.Minute, 2)
	event(t, ns, "ag2", kinds.ArtifactGenerator.Kind, "flux-system", "Warning", sourceextensionsv1beta1.SourceFetchFailedReason,
		"failed to fetch artifact of GitRepository/"+ns+"/flux-system", time.Hour, time.Hour, 1)
	event(t, ns, "ks1", kinds.Kustomization.Kind, "apps", "Normal", meta.ReconciliationSucceededReason,
		"Reconciliation finished", 5*time.Minute, 5*time.Minute, 1)
}
