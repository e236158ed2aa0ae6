package objectview

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmapp"
)

// TestDiffHelmRelease: a release installed with the helm controller's
// client, its chartRef's OCIRepository missing, then the HelmRelease's
// values edited in the cluster; Diff renders it with the stored chart,
// saying so: a changed ConfigMap, a masked Secret change, a deleted
// object.
func TestDiffHelmRelease(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
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
	helmapp.Install(t, env, hr, helmapp.Chart(t, "1.0.0"))

	// The OCIRepository does not exist: the chart of the release stands
	// in, and the result says so.
	note := "rendered with the chart of the current release (OCIRepository " + ns + "/app not found): a new chart version would not show"
	ref := Ref{Kind: "HelmRelease", Namespace: ns, Name: "app"}
	res, err := Diff(context.Background(), env.Client, env.Config, ref)
	if err != nil || res.Error != note || len(res.Created)+len(res.Changed)+len(res.Deleted) != 0 {
		t.Fatalf("right after the install: %v, %+v; want no change and %q", err, res, note)
	}

	env.Update(t, hr, func() {
		hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"greeting":"hola","extra":false,"token":"rotated-never-printed"}`)}
	})
	res, err = Diff(context.Background(), env.Client, env.Config, ref)
	if err != nil || res.Error != note {
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
