package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/weir-gitops/weir/internal/testenv/helmrepo"
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
	p, err := chartutil.Save(helmrepo.NewChart(name, version, "1.0"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// tarEntry is one entry of a hand-made archive; link makes a symlink,
// hard a hard link.
type tarEntry struct {
	name, body, link string
	hard             bool
	size             int64 // header size when not len(body)
}

// tarGz writes entries unchecked: tests build hostile archives with it.
func tarGz(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.body))}
		switch {
		case e.link != "" && e.hard:
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, e.link, 0
		case e.link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.link == "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func helmMetadata(name, version string) *chartv2.Metadata {
	return &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: name, Version: version}
}
