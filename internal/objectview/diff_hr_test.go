package objectview

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/testenv"
)

// chartFiles are a chart with a ConfigMap showing a value, a Secret and a
// ConfigMap the values can turn off.
var chartFiles = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: app\nversion: 1.0.0\n",
	"values.yaml": "greeting: hello\nextra: true\n",
	"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n" +
		"data:\n  greeting: {{ .Values.greeting | quote }}\n",
	"templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}\n" +
		"stringData:\n  token: {{ .Values.token | default \"do-not-print-me\" }}\n",
	"templates/extra.yaml": "{{- if .Values.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata: {}\n{{- end }}\n",
}

// TestDiffHelmRelease: a release installed with the helm controller's
// client, then the HelmRelease's values edited in the cluster; Diff
// renders it with the stored chart: a changed ConfigMap, a masked Secret
// change, a deleted object.
func TestDiffHelmRelease(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	chartDir := t.TempDir()
	for p, body := range chartFiles {
		full := filepath.Join(chartDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hr := &helmv2.HelmRelease{}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app, namespace: NS}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: app}
  install: {disableWait: true}
  upgrade: {disableWait: true}
  values: {greeting: hi}
`, "NS", ns)), hr); err != nil {
		t.Fatal(err)
	}
	install(t, env, hr, chartDir)

	ref := Ref{Kind: "HelmRelease", Namespace: ns, Name: "app"}
	res, err := Diff(context.Background(), env.Client, env.Config, ref)
	if err != nil || res.Error != "" || len(res.Created)+len(res.Changed)+len(res.Deleted) != 0 {
		t.Fatalf("right after the install: %v, %+v; want no change", err, res)
	}

	env.Update(t, hr, func() {
		hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"greeting":"hola","extra":false,"token":"rotated-never-printed"}`)}
	})
	res, err = Diff(context.Background(), env.Client, env.Config, ref)
	if err != nil || res.Error != "" {
		t.Fatalf("after a values edit: %v, %+v", err, res)
	}
	got := map[string][]string{"created": ids(res.Created), "changed": ids(res.Changed), "deleted": ids(res.Deleted)}
	want := map[string][]string{
		"created": {},
		"changed": {"Secret/" + ns + "/app", "ConfigMap/" + ns + "/app"},
		"deleted": {"ConfigMap/" + ns + "/app-extra"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if res.Revision != "app@1.0.0" {
		t.Errorf("revision %q, want app@1.0.0", res.Revision)
	}
	for _, c := range res.Changed {
		if strings.Contains(c.Diff, "never-printed") || strings.Contains(c.Diff, "do-not-print-me") {
			t.Errorf("%s's diff shows a Secret value:\n%s", c.ID, c.Diff)
		}
		if strings.HasPrefix(c.ID, "ConfigMap/") && !strings.Contains(c.Diff, "+  greeting: hola") {
			t.Errorf("%s's diff:\n%s", c.ID, c.Diff)
		}
	}
}

// install installs hr's release from chartDir with the helm controller's
// own Helm client, as the controller would, and creates hr.
func install(t *testing.T, env *testenv.Env, hr *helmv2.HelmRelease, chartDir string) {
	t.Helper()
	chrt, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := c.Install(context.Background(), hr, chrt, values, false); err != nil {
		t.Fatal(err)
	}
	env.Create(t, hr)
}
