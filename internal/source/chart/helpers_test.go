package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// writeFiles writes files (slash paths → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// chartYAML is a minimal Chart.yaml, with extra lines appended.
func chartYAML(name, version string, extra ...string) string {
	return "apiVersion: v2\nname: " + name + "\nversion: " + version + "\n" + strings.Join(extra, "\n") + "\n"
}

// packaged returns the archive helm package writes for a test chart.
func packaged(t testing.TB, name, version string) []byte {
	t.Helper()
	return helmserver.Package(t, helmserver.NewChart(name, version, "1.0"))
}

func helmMetadata(name, version string) *chartv2.Metadata {
	return &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: name, Version: version}
}
