package cli_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

const appliedRev = "main@sha1:67e2c98a60dc92283531412a9e604dd4bae005a9"

// caughtUp answers as a kustomize controller would once the object is no
// longer suspended: Ready at the new generation.
func caughtUp(u *unstructured.Unstructured) map[string]any {
	if kinds.Suspended(u) || kinds.ObservedGeneration(u) == u.GetGeneration() {
		return nil
	}
	return map[string]any{
		"lastAppliedRevision": appliedRev,
		"conditions":          readyCondition("ReconciliationSucceeded", "Applied revision: "+appliedRev),
	}
}

func TestSuspendResume(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "suspend/objects.yaml", ns)
	fakeController(t, kinds.Kustomization, ns, "apps", caughtUp)
	fakeController(t, kinds.Kustomization, ns, "infra", caughtUp)

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"suspend one with a reason", []string{"suspend", "ks", "apps", "--reason", "maintenance"}, 0, "suspend/suspend-one.golden"},
		{"get shows it", []string{"get", "ks"}, 0, "suspend/get-after-suspend.golden"},
		{"resume one waits", []string{"resume", "kustomization", "apps"}, 0, "suspend/resume-one.golden"},
		{"suspend many, one missing", []string{"suspend", "ks", "apps", "infra", "missing", "apps"}, 1, "suspend/suspend-many.golden"},
		{"resume many does not wait", []string{"resume", "ks", "apps", "infra"}, 0, "suspend/resume-many.golden"},
		{"suspend all", []string{"suspend", "ks", "--all"}, 0, "suspend/suspend-all.golden"},
		{"resume all with wait", []string{"resume", "ks", "--all", "--wait"}, 0, "suspend/resume-all-wait.golden"},
		{"suspend source", []string{"suspend", "source", "git", "podinfo"}, 0, "suspend/suspend-source.golden"},
		{"name required", []string{"suspend", "source", "git"}, 1, "suspend/name-required.golden"},
		{"resume without controller times out", []string{"resume", "source", "git", "podinfo", "--timeout", "3s"}, 1, "suspend/resume-timeout.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
	}

	u := kinds.Kustomization.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "apps"), u); err != nil {
		t.Fatal(err)
	}
	if kinds.Suspended(u) || u.GetAnnotations()["suspend.toolkit.fluxcd.io/reason"] != "" {
		t.Errorf("apps still suspended or annotated after resume: %v", u.Object["metadata"])
	}

	// Shell completion offers the kind's names in the namespace.
	res := weir(t, "__complete", "suspend", "ks", "-n", ns, "a")
	if !strings.HasPrefix(res.Stdout, "apps\n:4\n") {
		t.Errorf("completing `suspend ks a`: %q", res.Stdout)
	}
	res = weir(t, "__complete", "reconcile", "source", "git", "-n", ns, "")
	if !strings.HasPrefix(res.Stdout, "podinfo\n:4\n") {
		t.Errorf("completing `reconcile source git`: %q", res.Stdout)
	}
}
