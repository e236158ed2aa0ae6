package objectview

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// helmFleet is a HelmRelease whose values come from a ConfigMap (merged at
// the root), a Secret (merged at the root, and one key at a targetPath),
// a missing optional ConfigMap and spec.values on top; its HelmChart
// carries the artifact digest.
const helmFleet = `apiVersion: v1
kind: ConfigMap
metadata: {name: base, namespace: NS}
data:
  values.yaml: |
    replicaCount: 1
    image: {repository: ghcr.io/stefanprodan/podinfo, tag: "6.5.0"}
    ui: {color: blue}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: NS}
stringData:
  values.yaml: |
    auth: {password: hunter2}
    ui: {message: secret greeting}
  token: s3cr3t
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: NS-app, namespace: NS}
spec: {chart: podinfo, version: "6.x", sourceRef: {kind: HelmRepository, name: charts}, interval: 1m}
status:
  artifact: {path: helmchart/NS/NS-app/podinfo-6.5.0.tgz, url: "http://127.0.0.1:1/podinfo-6.5.0.tgz", revision: "6.5.0", digest: "sha256:cafe", lastUpdateTime: "2026-01-01T10:00:00Z", size: 1}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app, namespace: NS}
spec:
  interval: 5m
  chart: {spec: {chart: podinfo, version: "6.x", sourceRef: {kind: HelmRepository, name: charts}}}
  valuesFrom:
  - {kind: ConfigMap, name: base}
  - {kind: ConfigMap, name: absent, optional: true}
  - {kind: Secret, name: creds}
  - {kind: Secret, name: creds, valuesKey: token, targetPath: image.pullToken}
  values: {replicaCount: 3, ui: {color: red}}
status:
  helmChart: NS/NS-app
  history:
  - {name: app, namespace: NS, version: 2, status: deployed, chartName: podinfo, chartVersion: "6.5.0", appVersion: "6.5.0", configDigest: "sha256:c", digest: "sha256:d", firstDeployed: "2026-12-01T00:00:00Z", lastDeployed: "2026-12-02T00:00:00Z"}
`

// TestHelmValuesAndChart reads a HelmRelease's page: the merged values
// with each top-level key's layers, what a Secret gave masked, and the
// chart's name, version and digest; a user who may read the HelmRelease
// but not the Secret gets a sentence instead of the values.
func TestHelmValuesAndChart(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyYAML(t, ns, helmFleet)
	ref := Ref{Kind: "HelmRelease", Namespace: ns, Name: "app"}
	d, err := Get(context.Background(), env.Client, env.Config, ref)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(d.Helm, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "s3cr3t", "secret greeting"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the page carries the Secret's value %q:\n%s", secret, data)
		}
	}
	golden.Assert(t, filepath.Join("testdata", "helm-values.json"), []byte(strings.ReplaceAll(string(data), ns, "NS")+"\n"))

	grant(t, ns, "dave", "helm.toolkit.fluxcd.io", []string{"helmreleases"}, []string{"get", "list"})
	grant(t, ns, "dave", "", []string{"configmaps"}, []string{"get"})
	c, cfg := as(t, "dave")
	d, err = Get(context.Background(), c, cfg, ref)
	if err != nil {
		t.Fatal(err)
	}
	want := "You may not read every ConfigMap and Secret valuesFrom names, so the values cannot be shown: " +
		"could not get Secret '" + ns + "/creds': secrets \"creds\" is forbidden: User \"dave\" cannot get resource \"secrets\" in API group \"\" in the namespace \"" + ns + "\""
	if d.Helm.ValuesError != want || d.Helm.ValuesYAML != "" {
		t.Errorf("dave's values: %q, error %q; want no values and %q", d.Helm.ValuesYAML, d.Helm.ValuesError, want)
	}
	if d.Helm.Chart.Name != "podinfo" || d.Helm.Chart.Digest != "" {
		t.Errorf("dave's chart = %+v, want podinfo without the digest of a HelmChart he may not read", d.Helm.Chart)
	}
}
