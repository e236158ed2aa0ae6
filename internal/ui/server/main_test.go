package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/uiserver"
	"github.com/weir-gitops/weir/internal/ui/server"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

// assets stand in for internal/ui/web in these tests.
var assets = fstest.MapFS{
	"index.html": {Data: []byte("<!doctype html><title>weir</title><script type=module src=/app.js></script>")},
	"app.js":     {Data: []byte("export {}")},
}

// running is a server started for one test, with what it logs.
type running struct {
	*uiserver.Running
	logs *testenv.LogBuffer
}

func start(t *testing.T, mode server.Mode, cfg *rest.Config) *running {
	t.Helper()
	logs := &testenv.LogBuffer{}
	return &running{Running: uiserver.Start(t, server.Options{Mode: mode, Config: cfg, Assets: assets, Logger: logs.Logger()}), logs: logs}
}

// browser is an HTTP client with a cookie jar, as a browser tab.
type browser struct {
	t      *testing.T
	c      *http.Client
	base   string
	origin string
	csrf   string
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}, base: base, origin: base}
}

// localLogin spends a login URL and fetches the CSRF token.
func localLogin(t *testing.T, r *running) *browser {
	t.Helper()
	b := newBrowser(t, r.Base)
	resp, err := b.c.Get(r.LoginURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.RawQuery != "" {
		t.Fatalf("login: %s at %s", resp.Status, resp.Request.URL)
	}
	b.fetchCSRF()
	return b
}

func (b *browser) fetchCSRF() {
	var who map[string]any
	if code := b.getJSON("/api/whoami", &who); code != http.StatusOK {
		b.t.Fatalf("whoami: %d %v", code, who)
	}
	b.csrf, _ = who["csrfToken"].(string)
}

func (b *browser) do(req *http.Request) (int, []byte) {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp.StatusCode, body
}

func (b *browser) getJSON(path string, into any) int {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	code, body := b.do(req)
	if into != nil {
		if err := json.Unmarshal(body, into); err != nil {
			b.t.Fatalf("GET %s: %d %s: %v", path, code, body, err)
		}
	}
	return code
}

// post sends body as JSON with the browser's Origin and CSRF token.
func (b *browser) post(path string, body any, into any) int {
	b.t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		b.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, b.base+path, bytes.NewReader(data))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if b.origin != "" {
		req.Header.Set("Origin", b.origin)
	}
	if b.csrf != "" {
		req.Header.Set(server.CSRFHeader, b.csrf)
	}
	code, out := b.do(req)
	if into != nil {
		if err := json.Unmarshal(out, into); err != nil {
			b.t.Fatalf("POST %s: %d %s: %v", path, code, out, err)
		}
	}
	return code
}

// object builds an unstructured toolkit object from a JSON text.
func object(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	return u
}
