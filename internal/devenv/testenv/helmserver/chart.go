package helmserver

import (
	"os"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// fileTime is the modification time of every file in a chart, so that the
// same chart packages to the same digest on every run.
var fileTime = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// configMapTemplate renders one ConfigMap that shows which chart version,
// app version and values were installed.
const configMapTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
data:
  chartVersion: {{ .Chart.Version | quote }}
  appVersion: {{ .Chart.AppVersion | quote }}
  greeting: {{ .Values.greeting | quote }}
`

const valuesYAML = "greeting: hello\n"

// NewChart builds a minimal application chart in memory: Chart.yaml,
// values.yaml (greeting: hello) and templates/configmap.yaml.
func NewChart(name, version, appVersion string) *chartv2.Chart {
	return &chartv2.Chart{
		Metadata: &chartv2.Metadata{
			APIVersion:  chartv2.APIVersionV2,
			Name:        name,
			Version:     version,
			AppVersion:  appVersion,
			Description: "A chart built by weir's tests.",
			Type:        "application",
		},
		ModTime: fileTime,
		// Save writes values.yaml from Raw; Values is what a loaded chart holds.
		Raw:    []*common.File{{Name: "values.yaml", Data: []byte(valuesYAML), ModTime: fileTime}},
		Values: map[string]any{"greeting": "hello"},
		Templates: []*common.File{
			{Name: "templates/configmap.yaml", Data: []byte(configMapTemplate), ModTime: fileTime},
		},
	}
}

// Package returns ch as `helm package` writes it (chartutil.Save), for
// tests that serve or push archives themselves.
func Package(t testing.TB, ch *chartv2.Chart) []byte {
	t.Helper()
	p, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatalf("package chart %s-%s: %v", ch.Name(), ch.Metadata.Version, err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
