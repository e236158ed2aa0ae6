package helmserver_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
)

func TestResolveAndDownloadChart(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{Username: "user", Password: "pass"})
	for _, v := range []string{"0.9.0", "1.0.0", "1.4.2"} {
		srv.AddChart(t, helmserver.NewChart("app", v, "v"+v))
	}
	// A version added later shows up after the re-index.
	wantURL := srv.AddChart(t, helmserver.NewChart("app", "1.10.0", "v1.10.0"))
	srv.AddChart(t, helmserver.NewChart("app", "2.0.0", "v2.0.0"))

	index := fetchIndex(t, srv, "user", "pass")
	tests := []struct {
		name       string
		constraint string
		want       string
	}{
		{name: "range", constraint: ">=1.0.0 <2.0.0", want: "1.10.0"},
		{name: "tilde", constraint: "~1.4", want: "1.4.2"},
		{name: "latest", constraint: "", want: "2.0.0"},
		{name: "exact", constraint: "0.9.0", want: "0.9.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cv, err := index.Get("app", tt.constraint)
			if err != nil {
				t.Fatalf("resolve %q: %v", tt.constraint, err)
			}
			if cv.Version != tt.want {
				t.Errorf("resolved %q to %s, want %s", tt.constraint, cv.Version, tt.want)
			}
		})
	}

	cv, err := index.Get("app", ">=1.0.0 <2.0.0")
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if len(cv.URLs) != 1 || cv.URLs[0] != wantURL {
		t.Fatalf("chart URLs = %v, want [%s]", cv.URLs, wantURL)
	}
	resp := get(t, cv.URLs[0], "user", "pass")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("download %s: status %d", cv.URLs[0], resp.StatusCode)
	}
	ch, err := loader.LoadArchive(resp.Body)
	if err != nil {
		t.Fatalf("load chart archive: %v", err)
	}
	if ch.Metadata.Version != "1.10.0" || ch.Metadata.AppVersion != "v1.10.0" {
		t.Errorf("loaded chart %s-%s (app %s), want app-1.10.0 (app v1.10.0)", ch.Name(), ch.Metadata.Version, ch.Metadata.AppVersion)
	}
	if len(ch.Templates) != 1 || ch.Templates[0].Name != "templates/configmap.yaml" {
		t.Errorf("templates = %v, want [templates/configmap.yaml]", ch.Templates)
	}
	if ch.Values["greeting"] != "hello" {
		t.Errorf("values = %v, want greeting: hello", ch.Values)
	}
}

func TestCredentialsRefused(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{Username: "user", Password: "pass"})
	chartURL := srv.AddChart(t, helmserver.NewChart("app", "1.0.0", "1.0.0"))

	tests := []struct {
		name, user, pass string
		wantStatus       int
	}{
		{name: "right credentials", user: "user", pass: "pass", wantStatus: http.StatusOK},
		{name: "wrong password", user: "user", pass: "nope", wantStatus: http.StatusUnauthorized},
		{name: "wrong user", user: "eve", pass: "pass", wantStatus: http.StatusUnauthorized},
		{name: "anonymous", wantStatus: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		for _, url := range []string{srv.URL() + "/index.yaml", chartURL} {
			t.Run(tt.name+" "+filepath.Base(url), func(t *testing.T) {
				resp := get(t, url, tt.user, tt.pass)
				resp.Body.Close()
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("GET %s: status %d, want %d", url, resp.StatusCode, tt.wantStatus)
				}
				if tt.wantStatus == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
					t.Errorf("WWW-Authenticate = %q, want a Basic challenge", resp.Header.Get("WWW-Authenticate"))
				}
			})
		}
	}
}

func TestEmptyRepository(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{})
	index := fetchIndex(t, srv, "", "")
	if len(index.Entries) != 0 {
		t.Errorf("new repository lists %d charts, want none", len(index.Entries))
	}
}

func TestSameChartSameDigest(t *testing.T) {
	var digests []string
	for range 2 {
		srv := helmserver.New(t, helmserver.Options{})
		srv.AddChart(t, helmserver.NewChart("app", "1.0.0", "1.0.0"))
		cv, err := fetchIndex(t, srv, "", "").Get("app", "1.0.0")
		if err != nil {
			t.Fatalf("resolve: %v", err)
		}
		digests = append(digests, cv.Digest)
	}
	if digests[0] != digests[1] {
		t.Errorf("same chart packaged twice got digests %s and %s", digests[0], digests[1])
	}
}

// fetchIndex downloads index.yaml and parses it with Helm's repo package.
func fetchIndex(t *testing.T, srv *helmserver.Server, user, pass string) *repo.IndexFile {
	t.Helper()
	resp := get(t, srv.URL()+"/index.yaml", user, pass)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET index.yaml: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read index.yaml: %v", err)
	}
	// Helm parses indexes only from files.
	path := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatalf("write index.yaml: %v", err)
	}
	index, err := repo.LoadIndexFile(path)
	if err != nil {
		t.Fatalf("parse index.yaml: %v", err)
	}
	return index
}

func get(t *testing.T, url, user, pass string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}
