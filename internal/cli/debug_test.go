package cli_test

import (
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestDebug runs `weir debug` against objects in the real API server: the
// variables come from a ConfigMap and a Secret (a later source overriding
// an earlier one, spec.postBuild.substitute overriding both, an optional
// missing Secret skipped), the values from a ConfigMap document, two
// targetPath entries of a Secret and the inline values, merged as the
// controllers merge them.
func TestDebug(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "debug/objects.yaml", ns)
	runGoldenCases(t, ns, []goldenCase{
		{"ks vars", []string{"debug", "kustomization", "apps", "--show-vars"}, "debug/ks-vars.golden", 0},
		{"ks status", []string{"debug", "ks", "apps", "--show-status"}, "debug/ks-status.golden", 0},
		{"ks history", []string{"debug", "ks", "apps", "--show-history"}, "debug/ks-history.golden", 0},
		{"ks no postBuild", []string{"debug", "ks", "plain", "--show-vars"}, "debug/ks-no-postbuild.golden", 1},
		{"ks missing source", []string{"debug", "ks", "broken", "--show-vars"}, "debug/ks-missing-source.golden", 1},
		{"ks no flag", []string{"debug", "ks", "apps"}, "debug/ks-no-flag.golden", 1},
		{"ks two flags", []string{"debug", "ks", "apps", "--show-vars", "--show-status"}, "debug/ks-two-flags.golden", 1},
		{"ks not found", []string{"debug", "ks", "nope", "--show-status"}, "debug/ks-not-found.golden", 1},
		{"hr values", []string{"debug", "helmrelease", "podinfo", "--show-values"}, "debug/hr-values.golden", 0},
		{"hr status", []string{"debug", "hr", "podinfo", "--show-status"}, "debug/hr-status.golden", 0},
		{"hr empty history", []string{"debug", "hr", "podinfo", "--show-history"}, "debug/hr-history.golden", 0},
		{"hr missing source", []string{"debug", "hr", "strict", "--show-values"}, "debug/hr-missing-source.golden", 1},
		{"hr no flag", []string{"debug", "hr", "podinfo"}, "debug/hr-no-flag.golden", 1},
	})
}
