package cli_test

import (
	"testing"

	"github.com/weir-gitops/weir/internal/testenv"
)

func TestTree(t *testing.T) {
	env := testenv.Get(t)
	ns, hrNS := env.Namespace(t), env.Namespace(t)
	applyFixture(t, "tree/objects.yaml", ns, hrNS)
	// A HelmRelease in another namespace, with the inventory of its release.
	applyYAML(t, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cert-manager
  namespace: `+hrNS+`
spec:
  interval: 10m0s
  chart:
    spec:
      chart: cert-manager
      sourceRef:
        kind: HelmRepository
        name: cert-manager
status:
  inventory:
    entries:
    - id: `+hrNS+`_cert-manager_apps_Deployment
      v: v1
    - id: _certificates.cert-manager.io_apiextensions.k8s.io_CustomResourceDefinition
      v: v1
`)
	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"tree", []string{"tree", "kustomization", "flux-system"}, 0, "tree/tree.golden"},
		{"compact", []string{"tree", "ks", "flux-system", "--compact"}, 0, "tree/compact.golden"},
		{"json", []string{"tree", "ks", "infrastructure", "-o", "json"}, 0, "tree/infrastructure.json.golden"},
		{"yaml", []string{"tree", "ks", "apps", "-o", "yaml"}, 0, "tree/apps.yaml.golden"},
		{"cycle", []string{"tree", "ks", "cycle-a"}, 0, "tree/cycle.golden"},
		{"empty", []string{"tree", "ks", "empty"}, 0, "tree/empty.golden"},
		{"missing", []string{"tree", "ks", "missing"}, 1, "tree/missing.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns, hrNS)
	}
}
