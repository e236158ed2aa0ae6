package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func reconcileApps(ns string) map[string]any {
	return map[string]any{"action": "reconcile", "targets": []map[string]string{{"kind": "Kustomization", "namespace": ns, "name": "apps"}}}
}

func TestCSRF(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fleet(t, env, ns)
	r := start(t, "local", env.Config)
	b := localLogin(t, r)
	token := b.csrf

	b.csrf = ""
	if code := b.post("/api/actions", reconcileApps(ns), nil); code != http.StatusForbidden {
		t.Errorf("POST without a CSRF token: %d, want 403", code)
	}
	b.csrf = strings.Repeat("0", len(token))
	if code := b.post("/api/actions", reconcileApps(ns), nil); code != http.StatusForbidden {
		t.Errorf("POST with a wrong CSRF token: %d, want 403", code)
	}
	b.csrf, b.origin = token, "http://evil.example"
	var body map[string]any
	if code := b.post("/api/actions", reconcileApps(ns), &body); code != http.StatusForbidden {
		t.Errorf("POST from a foreign Origin: %d, want 403", code)
	}
	t.Logf("foreign origin: %v", body["error"])
	b.origin = "http://localhost:" + r.Port
	if code := b.post("/api/actions", reconcileApps(ns), &body); code != http.StatusForbidden {
		t.Errorf("POST from another loopback origin than the page's: %d, want 403", code)
	}
	b.origin = r.Base
	if code := b.post("/api/actions", reconcileApps(ns), &body); code != http.StatusOK {
		t.Errorf("POST with token and own Origin: %d %v, want 200", code, body)
	}
}

func TestLocalHostAndLoginToken(t *testing.T) {
	env := testenv.Get(t)
	r := start(t, "local", env.Config)
	b := localLogin(t, r)

	for _, host := range []string{"rebind.example:" + r.Port, "127.0.0.1:1", "127.0.0.2:" + r.Port} {
		req, _ := http.NewRequest(http.MethodGet, r.Base+"/api/whoami", nil)
		req.Host = host
		if code, body := b.do(req); code != http.StatusForbidden {
			t.Errorf("Host %s: %d %s, want 403", host, code, body)
		}
	}
	for _, host := range []string{"localhost:" + r.Port, "[::1]:" + r.Port} {
		req, _ := http.NewRequest(http.MethodGet, r.Base+"/api/whoami", nil)
		req.Host = host
		// The cookie is 127.0.0.1's: another loopback name has no session.
		if code, body := b.do(req); code != http.StatusUnauthorized {
			t.Errorf("Host %s: %d %s, want 401", host, code, body)
		}
	}

	url := r.LoginURL()
	first, second := newBrowser(t, r.Base), newBrowser(t, r.Base)
	if resp, err := first.c.Get(url); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("first use of the login URL: %v %v", resp, err)
	}
	resp, err := second.c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("second use of a login URL: %d, want 403", resp.StatusCode)
	}
	if code := second.getJSON("/api/whoami", nil); code != http.StatusUnauthorized {
		t.Errorf("whoami after a refused login: %d, want 401", code)
	}
	// The spent link opened again by the browser that is logged in: its
	// page, not a refusal; by a person without a session, a sentence.
	resp, err = first.c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.RawQuery != "" {
		t.Errorf("the spent login URL again while logged in: %s at %s, want 200 without the token", resp.Status, resp.Request.URL)
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err = second.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(body), "run weir ui again") {
		t.Errorf("the spent login URL from a browser without a session: %s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
	}
}

func TestAssetsAndHeaders(t *testing.T) {
	env := testenv.Get(t)
	r := start(t, "local", env.Config)
	b := newBrowser(t, r.Base)
	for path, want := range map[string]string{"/": "<!doctype html>", "/graph": "<!doctype html>",
		"/objects/Kustomization/a/b": "<!doctype html>", "/app.js": "export {}"} {
		req, _ := http.NewRequest(http.MethodGet, r.Base+path, nil)
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, body := b.do(req)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), want) {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, body)
		}
		h := resp.Header
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: headers %v", path, h)
		}
	}
	if code := b.getJSON("/api/nothing", nil); code != http.StatusNotFound {
		t.Errorf("unknown API route: %d, want 404", code)
	}
}

// TestTwoLocalServersKeepTheirSessions: a browser keeps cookies per host,
// whatever the port, so two weir ui on 127.0.0.1 must not share a cookie
// name, or logging in to one logs the other out.
func TestTwoLocalServersKeepTheirSessions(t *testing.T) {
	env := testenv.Get(t)
	a, b := start(t, "local", env.Config), start(t, "local", env.Config)
	br := localLogin(t, a)
	resp, err := br.c.Get(b.LoginURL()) // the same cookie jar: one browser
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login to the second server: %s", resp.Status)
	}
	for _, r := range []*running{a, b} {
		br.base = r.Base
		if code := br.getJSON("/api/whoami", nil); code != http.StatusOK {
			t.Errorf("whoami on %s after logging in to both: %d, want 200", r.Base, code)
		}
	}
}
