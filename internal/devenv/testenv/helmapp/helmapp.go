package helmapp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/helm/release"
)

// Files are the chart's files at version, slash-separated paths to
// contents.
func Files(version string) map[string]string {
	return map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: app\nversion: " + version + "\nappVersion: \"1.0\"\n",
		"values.yaml": "greeting: hello\nextra: true\n",
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  greeting: {{ .Values.greeting | quote }}
  servesHelmReleases: {{ .Capabilities.APIVersions.Has "helm.toolkit.fluxcd.io/v2" | quote }}
`,
		"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}
stringData:
  token: {{ .Values.token | default "do-not-print-me" }}
`,
		"templates/extra.yaml": `{{- if .Values.extra }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-extra
data: {}
{{- end }}
`,
	}
}

// WriteDir writes the chart at version into dir, as an unpacked chart
// directory (--chart-dir).
func WriteDir(t testing.TB, dir, version string) {
	t.Helper()
	for p, body := range Files(version) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Chart is the chart at version as Helm's loader reads it.
func Chart(t testing.TB, version string) *chartv2.Chart {
	t.Helper()
	dir := t.TempDir()
	WriteDir(t, dir, version)
	ch, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatalf("loading the chart app-%s: %v", version, err)
	}
	return ch
}

// Install installs hr's release of ch with hr's values through the helm
// controller's own Helm client (internal/helm/release), then creates hr.
func Install(t testing.TB, env *testenv.Env, hr *helmv2.HelmRelease, ch *chartv2.Chart) {
	t.Helper()
	values, err := hr.GetValues()
	if err != nil {
		t.Fatal(err)
	}
	c, err := release.NewClient(env.Config, release.Options{
		Name: hr.GetReleaseName(), Namespace: hr.GetReleaseNamespace(), StorageNamespace: hr.GetStorageNamespace(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Install(context.Background(), hr, ch, values, false); err != nil {
		t.Fatalf("installing %s/%s: %v", hr.Namespace, hr.Name, err)
	}
	env.Create(t, hr)
}
