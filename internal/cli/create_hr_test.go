package cli_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// TestCreateHelmReleaseExport pins what `create helmrelease --export`
// prints: a chart from a HelmRepository with every flag, a chartRef, and
// the values files merged in order.
func TestCreateHelmReleaseExport(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	assertCreateExports(t, ns, []createStep{
		{"create/export-hr.golden", []string{"helmrelease", "podinfo", "--source=HelmRepository/podinfo.flux-system",
			"--chart=podinfo", "--chart-version=>6.0.0 <7.0.0", "--release-name=podinfo-dev", "--target-namespace=apps",
			"--create-target-namespace", "--storage-namespace=helm", "--depends-on=infra,flux-system/crds",
			"--service-account=deployer", "--crds=CreateReplace", "--reconcile-strategy=Revision", "--chart-interval=5m",
			"--kubeconfig-secret-ref=remote", "--values-from=Secret/podinfo-values,configmap/podinfo-defaults",
			"--interval=10m", "--label=team=apps"}},
		{"create/export-hr-values.golden", []string{"hr", "podinfo", "--source=GitRepository/podinfo", "--chart=./charts/podinfo",
			"--values=testdata/create/hr-values-1.yaml", "--values=testdata/create/hr-values-2.yaml"}},
		{"create/export-hr-chartref.golden", []string{"hr", "podinfo", "--chart-ref=OCIRepository/podinfo.flux-system"}},
	})
}

func TestCreateHelmReleaseErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"hr", "podinfo"}, "✗ chart or chart-ref is required\n"},
		{[]string{"hr", "podinfo", "--chart=podinfo"}, "✗ source is required when using --chart\n"},
		{[]string{"hr", "podinfo", "--chart=podinfo", "--source=HelmRepository/podinfo", "--chart-ref=HelmChart/podinfo"},
			"✗ cannot use --chart in combination with --chart-ref\n"},
		{[]string{"hr", "podinfo", "--source=podinfo"},
			"✗ invalid argument \"podinfo\" for \"--source\" flag: invalid helm chart source 'podinfo', must be in format <kind>/<name>\n"},
		{[]string{"hr", "podinfo", "--source=OCIRepository/podinfo"},
			"✗ invalid argument \"OCIRepository/podinfo\" for \"--source\" flag: source kind 'OCIRepository' is not supported, must be one of: HelmRepository, GitRepository, Bucket\n"},
		{[]string{"hr", "podinfo", "--chart-ref=GitRepository/podinfo"},
			"✗ invalid argument \"GitRepository/podinfo\" for \"--chart-ref\" flag: chart reference kind 'GitRepository' is not supported, must be one of: OCIRepository, HelmChart\n"},
		{[]string{"hr", "podinfo", "--chart-ref=HelmChart/podinfo", "--crds=Always"},
			"✗ invalid argument \"Always\" for \"--crds\" flag: unsupported CRDs policy 'Always', must be one of: Skip, Create, CreateReplace\n"},
		{[]string{"hr", "podinfo", "--chart=podinfo", "--source=HelmRepository/podinfo", "--reconcile-strategy=Always"},
			"✗ 'Always' is an invalid reconcile strategy(valid: Revision, ChartVersion)\n"},
		{[]string{"hr", "podinfo", "--chart-ref=HelmChart/podinfo", "--values-from=Deployment/x"},
			"✚ generating HelmRelease\n✗ reference kind 'Deployment' is not supported, must be one of: Secret, ConfigMap\n"},
		{[]string{"hr", "podinfo", "--chart-ref=HelmChart/podinfo", "--values=testdata/create/missing.yaml"},
			"✚ generating HelmRelease\n✗ reading values from testdata/create/missing.yaml failed: open testdata/create/missing.yaml: no such file or directory\n"},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
}

// TestCreateHelmReleaseApply: without --export the HelmRelease is applied,
// awaited and reported as the flux CLI does, and a second run updates it.
func TestCreateHelmReleaseApply(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fakeController(t, kinds.HelmRelease, ns, "podinfo", reconciler(map[string]any{
		"lastAttemptedRevision": "6.3.5",
		"conditions":            readyCondition("InstallSucceeded", "Helm install succeeded for release "+ns+"/podinfo.v1 with chart podinfo@6.3.5"),
	}))
	args := []string{"create", "hr", "podinfo", "--source=HelmRepository/podinfo", "--chart=podinfo", "--chart-version=6.3.x", "-n", ns}
	for _, golden := range []string{"create/hr.golden", "create/hr-update.golden"} {
		res := weir(t, args...)
		if res.Code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, res.Code, res.Stderr)
		}
		assertGolden(t, golden, res.Output(), ns)
	}
	hr := kinds.HelmRelease.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "podinfo"), hr); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "spec", "version"); v != "6.3.x" {
		t.Errorf("applied chart version = %q", v)
	}
}
