package chartserve_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/devenv/chartserve"
)

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test on 127.0.0.1
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return body
}

// index fetches and parses the served index.yaml with Helm's loader.
func index(t *testing.T, s *chartserve.Server) *repo.IndexFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(path, get(t, s.URL()+"/"+chartserve.IndexFile), 0o600); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.LoadIndexFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// writeChart copies the example chart hello into a temporary directory and
// sets its version.
func writeChart(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "charts")
	if err := os.CopyFS(dir, examples.Charts()); err != nil {
		t.Fatal(err)
	}
	chartFile := filepath.Join(dir, "hello", "Chart.yaml")
	data, err := os.ReadFile(chartFile)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "version: 0.1.0", "version: "+version, 1))
	if err := os.WriteFile(chartFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "hello")
}

// TestServe packages two versions of the example chart, and checks that
// Helm reads the index (newest first, absolute archive URLs on the server)
// and the archives it points at.
func TestServe(t *testing.T) {
	s, err := chartserve.Start(filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s is not on 127.0.0.1", s.URL())
	}
	if n := len(index(t, s).Entries); n != 0 {
		t.Errorf("a new repository indexes %d charts", n)
	}
	for _, v := range []string{"0.1.0", "0.2.0", "0.1.0"} {
		archive, err := s.Package(writeChart(t, v))
		if err != nil {
			t.Fatal(err)
		}
		if archive != "hello-"+v+".tgz" {
			t.Errorf("archive %s, want hello-%s.tgz", archive, v)
		}
	}
	versions := index(t, s).Entries["hello"]
	if len(versions) != 2 || versions[0].Version != "0.2.0" || versions[1].Version != "0.1.0" {
		t.Fatalf("index lists %v", versions)
	}
	if len(versions[0].URLs) != 1 || versions[0].URLs[0] != s.URL()+"/hello-0.2.0.tgz" || versions[0].Digest == "" {
		t.Errorf("entry 0.2.0: urls %v, digest %q", versions[0].URLs, versions[0].Digest)
	}
	ch, err := loader.LoadArchive(strings.NewReader(string(get(t, versions[0].URLs[0]))))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Name() != "hello" || ch.Metadata.Version != "0.2.0" || len(ch.Templates) != 1 || ch.Values["greeting"] != "hello from weir dev" {
		t.Errorf("served chart: %s %s, %d templates, values %v", ch.Name(), ch.Metadata.Version, len(ch.Templates), ch.Values)
	}
}

// TestPackageInvalid refuses a directory that is not a chart and leaves
// the index as it was.
func TestPackageInvalid(t *testing.T) {
	s, err := chartserve.Start(filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	empty := t.TempDir()
	if _, err := s.Package(empty); err == nil || !strings.Contains(err.Error(), "loading chart "+empty) {
		t.Errorf("packaging an empty directory: %v", err)
	}
	if n := len(index(t, s).Entries); n != 0 {
		t.Errorf("index lists %d charts after a failed package", n)
	}
}
