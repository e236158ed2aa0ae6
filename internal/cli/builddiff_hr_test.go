package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmapp"
)

// writeHelmFleet lays out the chart helmapp shares (a ConfigMap showing
// the values and whether the cluster serves HelmReleases, a Secret, a
// ConfigMap the values can turn off) and a HelmRelease file with a
// post-renderer and commonMetadata.
func writeHelmFleet(t *testing.T, ns string) (chartDir, hrFile string) {
	t.Helper()
	root := t.TempDir()
	chartDir = filepath.Join(root, "charts", "app")
	helmapp.WriteDir(t, chartDir, "1.0.0")
	writeFiles(t, root, map[string]string{
		"apps/app.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: ` + ns + `
spec:
  interval: 10m
  chartRef:
    kind: OCIRepository
    name: app
  install:
    disableWait: true
  upgrade:
    disableWait: true
  values:
    greeting: hi
  postRenderers:
  - kustomize:
      patches:
      - target: {kind: ConfigMap, name: app}
        patch: |
          - op: add
            path: /data/patched
            value: "yes"
  commonMetadata:
    labels:
      team: platform
`,
	})
	return chartDir, filepath.Join(root, "apps/app.yaml")
}

// installWithSDK installs the HelmRelease of file from chartDir with the
// helm controller's own Helm client, as the controller would.
func installWithSDK(t *testing.T, env *testenv.Env, file, chartDir string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	hr := &helmv2.HelmRelease{}
	if err := yaml.Unmarshal(data, hr); err != nil {
		t.Fatal(err)
	}
	chrt, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	helmapp.Install(t, env, hr, chrt)
}

// TestBuildDiffHelmRelease: build prints what the controller would apply
// (post-renderer, commonMetadata, Secret masked), offline from a file and
// a chart directory; diff finds everything new before the install (1),
// nothing after it, whether the HelmRelease and chart come from the files
// or from the cluster and Helm storage (0), and a local values edit as a
// changed field, a masked Secret change and a deleted object (1); a
// broken chart is an error (2).
func TestBuildDiffHelmRelease(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	chartDir, hrFile := writeHelmFleet(t, ns)
	local := []string{"-n", ns, "--file", hrFile, "--chart-dir", chartDir}

	b := weir(t, append([]string{"build", "hr", "app"}, local...)...)
	if b.Code != 0 {
		t.Fatalf("build: exit %d\n%s", b.Code, b.Output())
	}
	if strings.Contains(b.Stdout, "do-not-print-me") {
		t.Error("build printed a Secret value")
	}
	assertGolden(t, "build/helmrelease.golden", b.Output(), ns)

	r := weir(t, append([]string{"diff", "hr", "app"}, local...)...)
	if r.Code != 1 || !strings.Contains(r.Stdout, "► ConfigMap/"+ns+"/app created") {
		t.Fatalf("before install: exit %d, want 1\n%s", r.Code, r.Output())
	}

	installWithSDK(t, env, hrFile, chartDir)
	for _, args := range [][]string{local, {"-n", ns}, {"-n", ns, "--chart-dir", chartDir}} {
		if r := weir(t, append([]string{"diff", "hr", "app"}, args...)...); r.Code != 0 || r.Stdout != "" {
			t.Errorf("diff %v after install: exit %d, want 0 and no output\n%s", args, r.Code, r.Output())
		}
	}
	// No OCIRepository: the chart of the release stands in, and stderr says so.
	note := "◎ rendered with the chart of the current release (OCIRepository " + ns + "/app not found): a new chart version would not show\n"
	if r := weir(t, "diff", "hr", "app", "-n", ns); r.Stderr != note {
		t.Errorf("diff from the cluster without the chart's source: stderr %q, want %q", r.Stderr, note)
	}
	if c := weir(t, "build", "hr", "app", "-n", ns); c.Code != 0 || c.Stdout != b.Stdout {
		t.Errorf("build from the cluster: exit %d, differs from the local build\n%s", c.Code, c.Output())
	}

	data, _ := os.ReadFile(hrFile)
	edited := strings.Replace(string(data), "greeting: hi", "greeting: hola\n    extra: false\n    token: rotated-never-printed", 1)
	if err := os.WriteFile(hrFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r = weir(t, append([]string{"diff", "hr", "app"}, local...)...)
	if r.Code != 1 {
		t.Fatalf("after a values edit: exit %d, want 1\n%s", r.Code, r.Output())
	}
	if strings.Contains(r.Stdout, "rotated-never-printed") || strings.Contains(r.Stdout, "do-not-print-me") {
		t.Error("diff printed a Secret value")
	}
	assertGolden(t, "diff/helmrelease.golden", r.Output(), ns)

	// A local HelmRelease with the chart of the release in storage.
	if r := weir(t, "build", "hr", "app", "-n", ns, "--file", hrFile); r.Code != 0 || !strings.Contains(r.Stdout, "greeting: hola") {
		t.Errorf("build --file with the stored chart: exit %d\n%s", r.Code, r.Output())
	}
	if r := weir(t, "build", "hr", "nope", "-n", ns); r.Code == 0 || !strings.Contains(r.Stderr, "HelmRelease "+ns+"/nope") {
		t.Errorf("missing HelmRelease: exit %d\n%s", r.Code, r.Output())
	}
	if r := weir(t, "diff", "hr", "app", "-n", ns, "--file", hrFile, "--chart-dir", filepath.Join(chartDir, "nope")); r.Code != 2 {
		t.Errorf("broken chart dir: exit %d, want 2\n%s", r.Code, r.Output())
	}
}

// writeFiles writes files (slash-separated paths to contents) under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuildHelmReleaseOffline: with no cluster to ask, a HelmRelease file
// and a chart directory still render; valuesFrom cannot, and the error
// names the object it needs.
func TestBuildHelmReleaseOffline(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	chartDir, hrFile := writeHelmFleet(t, ns)
	none := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(none, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := weir(t, "build", "hr", "app", "-n", ns, "--kubeconfig", none, "--file", hrFile, "--chart-dir", chartDir)
	if r.Code != 0 || !strings.Contains(r.Stdout, "greeting: hi") || !strings.Contains(r.Stdout, `servesHelmReleases: "false"`) {
		t.Fatalf("offline build: exit %d\n%s", r.Code, r.Output())
	}
	data, _ := os.ReadFile(hrFile)
	withRef := strings.Replace(string(data), "  values:\n", "  valuesFrom:\n  - kind: Secret\n    name: app-values\n  values:\n", 1)
	if err := os.WriteFile(hrFile, []byte(withRef), 0o644); err != nil {
		t.Fatal(err)
	}
	r = weir(t, "build", "hr", "app", "-n", ns, "--kubeconfig", none, "--file", hrFile, "--chart-dir", chartDir)
	want := "HelmRelease " + ns + "/app: could not get Secret '" + ns + "/app-values'"
	if r.Code == 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("offline build with valuesFrom: exit %d, want an error with %q\n%s", r.Code, want, r.Output())
	}
}
