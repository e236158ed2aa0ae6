package cli_test

import (
	"fmt"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
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

// TestTreeHelmRelease prints a HelmRelease's objects from its inventory,
// nesting what it created, and from Helm's storage when it has no
// inventory.
func TestTreeHelmRelease(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyYAML(t, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: platform
  namespace: `+ns+`
spec:
  interval: 10m0s
  chartRef:
    kind: OCIRepository
    name: platform
status:
  inventory:
    entries:
    - id: `+ns+`_platform_apps_Deployment
      v: v1
    - id: `+ns+`_tenants_kustomize.toolkit.fluxcd.io_Kustomization
      v: v1
    - id: `+ns+`_stored_helm.toolkit.fluxcd.io_HelmRelease
      v: v2
    - id: _platform__reader_rbac.authorization.k8s.io_ClusterRole
      v: v1
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: tenants
  namespace: `+ns+`
spec:
  interval: 10m0s
  path: ./tenants
  prune: true
  sourceRef:
    kind: GitRepository
    name: tenants
status:
  inventory:
    entries:
    - id: _team-a__Namespace
      v: v1
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: stored
  namespace: `+ns+`
spec:
  interval: 10m0s
  releaseName: stored-release
  chartRef:
    kind: OCIRepository
    name: stored
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: never-installed
  namespace: `+ns+`
spec:
  interval: 10m0s
  chartRef:
    kind: OCIRepository
    name: nothing
`)
	// The release of "stored" exists only in Helm's storage, two revisions.
	storeRelease(t, ns, "stored-release", 1, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n")
	storeRelease(t, ns, "stored-release", 2, "---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"+
		"---\n# Source: c/templates/ns.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra-"+ns+"\n")
	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"tree", []string{"tree", "helmrelease", "platform"}, 0, "tree/hr.golden"},
		{"compact", []string{"tree", "hr", "platform", "--compact"}, 0, "tree/hr-compact.golden"},
		{"storage", []string{"tree", "hr", "stored", "-o", "yaml"}, 0, "tree/hr-storage.yaml.golden"},
		{"no release", []string{"tree", "hr", "never-installed"}, 0, "tree/hr-none.golden"},
		{"missing", []string{"tree", "hr", "missing"}, 1, "tree/hr-missing.golden"},
		{"no name", []string{"tree", "hr"}, 1, "tree/hr-noname.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
	}
}

// storeRelease writes a deployed release record as Helm's Secret storage
// driver does.
func storeRelease(t *testing.T, ns, name string, version int, manifest string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(testenv.Get(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	rel := &releasev1.Release{Name: name, Namespace: ns, Version: version, Manifest: manifest,
		Info: &releasev1.Info{Status: rcommon.StatusDeployed}}
	if err := driver.NewSecrets(cs.CoreV1().Secrets(ns)).Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, version), rel); err != nil {
		t.Fatal(err)
	}
}
