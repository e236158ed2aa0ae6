package release

import (
	"bytes"
	"strings"
	"testing"
)

func TestOriginLabels(t *testing.T) {
	in := `# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  annotations:
    postrenderer.helm.sh/postrender-filename: app/templates/cm.yaml
  labels:
    keep: me
data:
  k: v
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
`
	out, err := originLabels{name: "podinfo", namespace: "apps"}.Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"helm.toolkit.fluxcd.io/name: podinfo", "helm.toolkit.fluxcd.io/namespace: apps", "keep: me",
		"postrenderer.helm.sh/postrender-filename: app/templates/cm.yaml", "kind: Deployment",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "helm.toolkit.fluxcd.io/name: podinfo"); n != 2 {
		t.Errorf("%d objects labelled, want 2:\n%s", n, got)
	}
	if strings.Contains(got, "config.kubernetes.io/index") {
		t.Errorf("reader annotations leaked:\n%s", got)
	}
}
