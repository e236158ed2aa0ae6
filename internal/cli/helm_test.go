package cli_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// The flux CLI's own expected output for `create source helm|chart
// --export`, from fluxcd/flux2 cmd/flux/testdata/create_source_helm/*.golden
// and create_source_chart/*.yaml (their {{ .fluxns }} is NS here). The chart
// cases ran there with a zero interval, hence --interval=0s below.
var fluxHelmExports = []struct {
	name, want string
	args       []string
}{
	{"https", "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: podinfo\n  namespace: NS\n" +
		"spec:\n  interval: 5m0s\n  url: https://stefanprodan.github.io/charts/podinfo\n",
		[]string{"source", "helm", "podinfo", "--url=https://stefanprodan.github.io/charts/podinfo", "--interval", "5m"}},
	{"oci", "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: podinfo\n  namespace: NS\n" +
		"spec:\n  interval: 5m0s\n  type: oci\n  url: oci://ghcr.io/stefanprodan/charts/podinfo\n",
		[]string{"source", "helm", "podinfo", "--url=oci://ghcr.io/stefanprodan/charts/podinfo", "--interval", "5m"}},
	{"oci-with-secret", "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: podinfo\n  namespace: NS\n" +
		"spec:\n  interval: 5m0s\n  secretRef:\n    name: creds\n  type: oci\n  url: oci://ghcr.io/stefanprodan/charts/podinfo\n",
		[]string{"source", "helm", "podinfo", "--url=oci://ghcr.io/stefanprodan/charts/podinfo", "--interval", "5m", "--secret-ref=creds"}},
	{"chart basic", "✚ generating HelmChart source\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n" +
		"  name: podinfo\n  namespace: NS\nspec:\n  chart: podinfo\n  interval: 0s\n  reconcileStrategy: ChartVersion\n" +
		"  sourceRef:\n    kind: HelmRepository\n    name: podinfo\n",
		[]string{"source", "chart", "podinfo", "--source", "helmrepository/podinfo", "--chart", "podinfo", "--interval=0s"}},
	{"chart verify complete", "✚ generating HelmChart source\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n" +
		"  name: podinfo\n  namespace: NS\nspec:\n  chart: podinfo\n  interval: 0s\n  reconcileStrategy: ChartVersion\n" +
		"  sourceRef:\n    kind: HelmRepository\n    name: podinfo\n  verify:\n    matchOIDCIdentity:\n    - issuer: foo\n" +
		"      subject: bar\n    provider: cosign\n",
		[]string{"source", "chart", "podinfo", "--source", "helmrepository/podinfo", "--chart", "podinfo",
			"--verify-provider", "cosign", "--verify-issuer", "foo", "--verify-subject", "bar", "--interval=0s"}},
}

// TestCreateHelmMatchesFlux checks that `create source helm|chart --export`
// prints, byte for byte, what the flux CLI's tests expect of it. In export
// mode no URL is contacted and no cluster is needed.
func TestCreateHelmMatchesFlux(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, c := range fluxHelmExports {
		res := weir(t, append(append([]string{"create"}, c.args...), "--export", "-n", ns)...)
		got := strings.ReplaceAll(res.Stderr+res.Stdout, ns, "NS")
		if res.Code != 0 || got != c.want {
			t.Errorf("%s: exit %d\n got:\n%s\nwant:\n%s", c.name, res.Code, got, c.want)
		}
	}
	// The shape of the flux e2e suite's first Helm step, default interval.
	res := weir(t, "create", "source", "helm", "podinfo", "--url", "https://stefanprodan.github.io/podinfo", "--export", "-n", ns)
	want := "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: podinfo\n  namespace: " + ns +
		"\nspec:\n  interval: 1m0s\n  url: https://stefanprodan.github.io/podinfo\n"
	if res.Code != 0 || res.Stdout != want || res.Stderr != "" {
		t.Errorf("create source helm podinfo --export: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// TestCreateHelmExport pins the flags flux's own goldens do not cover.
func TestCreateHelmExport(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	assertCreateExports(t, ns, []createStep{
		{"create/export-helm.golden", []string{"source", "helm", "charts", "--url=https://127.0.0.1/charts", "--secret-ref=charts-auth",
			"--pass-credentials", "--fetch-timeout=2m", "--label=team=apps", "--oci-provider=aws"}},
		{"create/export-helm-oci.golden", []string{"source", "helm", "ghcr", "--url=oci://ghcr.io/stefanprodan/charts", "--oci-provider=azure"}},
		{"create/export-chart.golden", []string{"source", "chart", "hello", "--source=GitRepository/fleet", "--chart=./charts/hello",
			"--chart-version=1.x", "--reconcile-strategy=Revision", "--verify-provider=cosign", "--verify-secret-ref=cosign-pub", "--interval=5m"}},
	})
}

func TestCreateHelmErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"source", "helm"}, "✗ name is required\n"},
		{[]string{"source", "helm", "podinfo"}, "✗ url is required\n"},
		{[]string{"source", "helm", "podinfo", "--url=git://example.com/charts"}, "✗ url scheme 'git' not supported, can be: http, https and oci\n"},
		{[]string{"source", "helm", "podinfo", "--url=https://x/y", "--ca-file=testdata/create/missing.crt"},
			"✗ unable to read TLS CA file: open testdata/create/missing.crt: no such file or directory\n"},
		{[]string{"source", "chart", "podinfo"}, "✗ chart source is required\n"},
		{[]string{"source", "chart", "podinfo", "--source", "helmrepository/podinfo"}, "✗ chart name or path is required\n"},
		{[]string{"source", "chart", "podinfo", "--source", "foobar/podinfo"},
			"✗ invalid argument \"foobar/podinfo\" for \"--source\" flag: source kind 'foobar' is not supported, must be one of: HelmRepository, GitRepository, Bucket\n"},
		{[]string{"source", "chart", "podinfo", "--source", "podinfo"},
			"✗ invalid argument \"podinfo\" for \"--source\" flag: invalid helm chart source 'podinfo', must be in format <kind>/<name>\n"},
		{[]string{"source", "chart", "podinfo", "--source", "HelmRepository/podinfo", "--chart", "podinfo", "--verify-provider", "foobar"},
			"✗ invalid argument \"foobar\" for \"--verify-provider\" flag: source OCI verify provider 'foobar' is not supported, must be one of: cosign\n"},
		{[]string{"source", "chart", "podinfo", "--source", "HelmRepository/podinfo", "--chart", "podinfo", "--verify-secret-ref", "key"},
			"✚ generating HelmChart source\n✗ a verification provider must be specified when a secret is specified\n"},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
}

// chartReady answers as source-controller does for a chart pulled from a
// HelmRepository.
func chartReady(u *unstructured.Unstructured) map[string]any {
	if kinds.ObservedGeneration(u) == u.GetGeneration() {
		return nil
	}
	return map[string]any{
		"artifact": map[string]any{"revision": "6.3.5", "digest": "sha256:0", "path": "helmchart/podinfo-6.3.5.tgz",
			"url": "http://127.0.0.1/podinfo-6.3.5.tgz", "lastUpdateTime": "2026-11-01T10:00:00Z", "size": int64(2048)},
		"observedChartName": "podinfo",
		"conditions":        readyCondition("ChartPullSucceeded", "pulled 'podinfo' chart with version '6.3.5'"),
	}
}

// indexReady answers as source-controller does for a HelmRepository index.
func indexReady(u *unstructured.Unstructured) map[string]any {
	if kinds.ObservedGeneration(u) == u.GetGeneration() {
		return nil
	}
	const rev = "sha256:5e2c7a9b8c1d0e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f"
	return map[string]any{
		"artifact": map[string]any{"revision": rev, "digest": rev, "path": "helmrepository/index.yaml",
			"url": "http://127.0.0.1/index.yaml", "lastUpdateTime": "2026-11-01T10:00:00Z", "size": int64(2048)},
		"conditions": readyCondition("Succeeded", "stored artifact: revision '"+rev+"'"),
	}
}

// TestCreateHelmApply creates HelmRepositories (one with credentials, one
// OCI) and a HelmChart against the API server, with stand-in controllers,
// and checks what create printed, the credentials Secret and that the
// objects are what --export shows.
func TestCreateHelmApply(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fakeController(t, kinds.HelmRepository, ns, "podinfo", indexReady)
	fakeController(t, kinds.HelmChart, ns, "podinfo", chartReady)
	// source-controller settles an OCI HelmRepository as a static object:
	// no conditions, no artifact; its status stops saying it is unobserved
	// (the CRD defaults observedGeneration to -1, which kstatus reads as in
	// progress, for flux's static wait as for weir's).
	fakeController(t, kinds.HelmRepository, ns, "ghcr", func(u *unstructured.Unstructured) map[string]any {
		if kinds.ObservedGeneration(u) == u.GetGeneration() {
			return nil
		}
		return map[string]any{}
	})

	helmArgs := []string{"create", "source", "helm", "podinfo", "--url=https://127.0.0.1/charts", "-u", "bot", "-p", "s3cret",
		"--ca-file=testdata/create/ca.crt", "--cert-file=testdata/create/tls.crt", "--key-file=testdata/create/tls.key",
		"--pass-credentials", "--interval=10m", "-n", ns}
	chartArgs := []string{"create", "source", "chart", "podinfo", "--source=HelmRepository/podinfo", "--chart=podinfo",
		"--chart-version=6.3.x", "-n", ns}
	steps := []struct {
		golden string
		args   []string
	}{
		{"create/helm.golden", helmArgs},
		{"create/helm-update.golden", helmArgs},
		{"create/helm-oci.golden", []string{"create", "source", "helm", "ghcr", "--url=oci://127.0.0.1:5000/charts", "-n", ns}},
		{"create/chart.golden", chartArgs},
	}
	for _, s := range steps {
		res := weir(t, s.args...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}

	for _, c := range []struct{ create, export []string }{
		{helmArgs, []string{"export", "source", "helm", "podinfo", "-n", ns}},
		{chartArgs, []string{"export", "source", "chart", "podinfo", "-n", ns}},
	} {
		var want, got map[string]any
		if err := yaml.Unmarshal([]byte(weir(t, append(c.create, "--export")...).Stdout), &want); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(weir(t, c.export...).Stdout), &got); err != nil {
			t.Fatal(err)
		}
		if path := missingFrom(want, got, ""); path != "" {
			t.Errorf("%v: the live object differs from --export at %s:\n%v\n%v", c.create, path, got, want)
		}
	}

	repo := kinds.HelmRepository.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "podinfo"), repo); err != nil {
		t.Fatal(err)
	}
	secretName, _, _ := unstructured.NestedString(repo.Object, "spec", "secretRef", "name")
	pass, _, _ := unstructured.NestedBool(repo.Object, "spec", "passCredentials")
	if secretName != "helm-podinfo" || !pass {
		t.Errorf("HelmRepository spec: secretRef %q, passCredentials %v", secretName, pass)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "helm-podinfo"}, secret); err != nil {
		t.Fatal(err)
	}
	for key, file := range map[string]string{"caFile": "ca.crt", "certFile": "tls.crt", "keyFile": "tls.key"} {
		if len(secret.Data[key]) == 0 {
			t.Errorf("secret key %s (from %s) is empty", key, file)
		}
	}
	if string(secret.Data["username"]) != "bot" || string(secret.Data["password"]) != "s3cret" || len(secret.Data) != 5 {
		t.Errorf("helm credentials secret keys: %v", keys(secret.Data))
	}
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// reconciler answers as a source controller does: with status for each new
// reconcile request and each generation it has not observed, and not at
// all while the object is suspended.
func reconciler(status map[string]any) func(u *unstructured.Unstructured) map[string]any {
	requested := onRequest(status)
	return func(u *unstructured.Unstructured) map[string]any {
		if kinds.Suspended(u) {
			return nil
		}
		if s := requested(u); s != nil {
			return s
		}
		if kinds.ObservedGeneration(u) == u.GetGeneration() {
			return nil
		}
		s := deepCopyMap(status)
		if last := kinds.LastHandledReconcileAt(u); last != "" {
			s["lastHandledReconcileAt"] = last
		}
		return s
	}
}

// TestHelmSources takes HelmRepositories and HelmCharts through get,
// reconcile, suspend, resume, export and delete.
func TestHelmSources(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "helm/objects.yaml", ns)
	rev := "sha256:5e2c7a9b8c1d0e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f"
	fakeController(t, kinds.HelmRepository, ns, "podinfo", reconciler(map[string]any{
		"artifact": map[string]any{"revision": rev, "digest": rev, "path": "index.yaml", "url": "http://127.0.0.1/index.yaml",
			"lastUpdateTime": "2026-11-01T10:00:00Z"},
		"conditions": readyCondition("Succeeded", "stored artifact: revision '"+rev+"'"),
	}))
	fakeController(t, kinds.HelmChart, ns, "podinfo", reconciler(map[string]any{
		"artifact": map[string]any{"revision": "6.3.5", "digest": "sha256:0", "path": "podinfo-6.3.5.tgz",
			"url": "http://127.0.0.1/podinfo-6.3.5.tgz", "lastUpdateTime": "2026-11-01T10:00:00Z"},
		"conditions": readyCondition("ChartPullSucceeded", "pulled 'podinfo' chart with version '6.3.5'"),
	}))

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"get helm", []string{"get", "sources", "helm"}, 0, "helm/get-helm.golden"},
		{"get chart", []string{"get", "sources", "chart"}, 0, "helm/get-chart.golden"},
		{"get chart wide", []string{"get", "source", "chart", "-o", "wide"}, 0, "helm/get-chart-wide.golden"},
		{"get sources all", []string{"get", "sources", "all"}, 0, "helm/get-sources-all.golden"},
		{"reconcile helm", []string{"reconcile", "source", "helm", "podinfo"}, 0, "helm/reconcile-helm.golden"},
		{"reconcile oci helm", []string{"reconcile", "source", "helm", "ghcr"}, 0, "helm/reconcile-helm-oci.golden"},
		{"reconcile chart", []string{"reconcile", "source", "chart", "podinfo"}, 0, "helm/reconcile-chart.golden"},
		{"suspend helm", []string{"suspend", "source", "helm", "podinfo"}, 0, "helm/suspend-helm.golden"},
		{"reconcile suspended", []string{"reconcile", "source", "helm", "podinfo"}, 1, "helm/reconcile-suspended.golden"},
		{"resume helm", []string{"resume", "source", "helm", "podinfo"}, 0, "helm/resume-helm.golden"},
		{"suspend chart", []string{"suspend", "source", "chart", "podinfo"}, 0, "helm/suspend-chart.golden"},
		{"resume chart", []string{"resume", "source", "chart", "podinfo"}, 0, "helm/resume-chart.golden"},
		{"export helm all", []string{"export", "source", "helm", "--all"}, 0, "helm/export-helm-all.golden"},
		{"export chart", []string{"export", "source", "chart", "podinfo"}, 0, "helm/export-chart.golden"},
		{"delete chart", []string{"delete", "source", "chart", "zz-old", "--silent"}, 0, "helm/delete-chart.golden"},
		{"delete helm", []string{"delete", "source", "helm", "ghcr", "-s"}, 0, "helm/delete-helm.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}
	for _, c := range []struct {
		k    kinds.Kind
		name string
	}{{kinds.HelmChart, "zz-old"}, {kinds.HelmRepository, "ghcr"}} {
		if err := env.Client.Get(t.Context(), keyOf(ns, c.name), c.k.New()); err == nil {
			t.Errorf("%s %s still exists after delete", c.k.Kind, c.name)
		}
	}
}
