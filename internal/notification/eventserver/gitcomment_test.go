package eventserver

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// ghRequest is one request the fake GitHub App host received.
type ghRequest struct {
	Method, Path, Auth, Body string
}

// fakeGitHubApp speaks what a pull request comment and a dispatch need
// of GitHub Enterprise's REST API, and a GitHub App's token exchange:
// installation 42 of App 77 gets the token ghs_app<N>.
type fakeGitHubApp struct {
	srv *httptest.Server

	mu       sync.Mutex
	reqs     []ghRequest
	comments []map[string]any
	tokens   int
}

func newFakeGitHubApp(t *testing.T) *fakeGitHubApp {
	t.Helper()
	g := &fakeGitHubApp{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/app", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONAnswer(w, http.StatusOK, map[string]any{"id": 77, "slug": "weir-app"})
	})
	mux.HandleFunc("POST /api/v3/app/installations/42/access_tokens", func(w http.ResponseWriter, _ *http.Request) {
		g.mu.Lock()
		g.tokens++
		n := g.tokens
		g.mu.Unlock()
		writeJSONAnswer(w, http.StatusCreated, map[string]any{"token": fmt.Sprintf("ghs_app%d", n),
			"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	})
	mux.HandleFunc("GET /api/v3/repos/org/app/issues/7/comments", func(w http.ResponseWriter, _ *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		writeJSONAnswer(w, http.StatusOK, append([]map[string]any{}, g.comments...))
	})
	mux.HandleFunc("POST /api/v3/repos/org/app/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		var c map[string]any
		_ = json.NewDecoder(r.Body).Decode(&c)
		g.mu.Lock()
		defer g.mu.Unlock()
		c["id"], c["user"] = 500+len(g.comments), map[string]string{"login": "weir-app[bot]"}
		g.comments = append(g.comments, c)
		writeJSONAnswer(w, http.StatusCreated, c)
	})
	mux.HandleFunc("PATCH /api/v3/repos/org/app/issues/comments/{id}", func(w http.ResponseWriter, r *http.Request) {
		var c map[string]any
		_ = json.NewDecoder(r.Body).Decode(&c)
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, old := range g.comments {
			if fmt.Sprint(old["id"]) == r.PathValue("id") {
				old["body"] = c["body"]
				writeJSONAnswer(w, http.StatusOK, old)
				return
			}
		}
		writeJSONAnswer(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	})
	mux.HandleFunc("POST /api/v3/repos/org/app/dispatches", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.reqs = append(g.reqs, ghRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: string(body)})
		g.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// writes returns the requests that changed something, and clears the log.
func (g *fakeGitHubApp) writes() []ghRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []ghRequest
	for _, r := range g.reqs {
		if r.Method != http.MethodGet && !strings.HasPrefix(r.Path, "/api/v3/app/") {
			out = append(out, r)
		}
	}
	g.reqs = nil
	return out
}

func TestPullRequestCommentAndDispatchThroughAlerts(t *testing.T) {
	f := newFixture(t)
	gh := newFakeGitHubApp(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	f.secret(t, "github-app", map[string]string{"githubAppID": "77", "githubAppInstallationID": "42",
		"githubAppPrivateKey": pemKey, "githubAppBaseURL": gh.srv.URL + "/api/v3"})
	f.secret(t, "github-token", map[string]string{"token": ghToken})
	pr := &notificationv1beta3.Provider{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "pr"},
		Spec: notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GitHubPullRequestCommentProvider,
			Address: gh.srv.URL + "/org/app", SecretRef: &meta.LocalObjectReference{Name: "github-app"}},
	}
	f.env.Create(t, pr)
	f.provider(t, "gha", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GitHubDispatchProvider,
		Address: gh.srv.URL + "/org/app.git", SecretRef: &meta.LocalObjectReference{Name: "github-token"}})
	source := []notificationv1.CrossNamespaceObjectReference{{Kind: kustomizev1.KustomizationKind, Name: "apps"}}
	for name, provider := range map[string]string{"comments": "pr", "dispatch": "gha"} {
		f.alert(t, name, func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name, s.EventSources = provider, source })
	}
	logs := &logBuffer{}
	s := newLoggingServer(t, logs)
	prEvent := func(reason string) events.Event {
		return kustomizationEvent(f.ns, "info", reason, commitA, map[string]string{"event.toolkit.fluxcd.io/change_request": "7"})
	}
	marker := "<!-- flux-pr-comment-key:" + string(pr.UID) + "/Kustomization/" + f.ns + "/apps -->"

	// The first event comments on #7 as the App, and is dispatched.
	sendEvent(t, s, prEvent("Progressing"))
	byPath := map[string]ghRequest{}
	for _, r := range gh.writes() {
		byPath[r.Method+" "+r.Path] = r
	}
	c, ok := byPath["POST /api/v3/repos/org/app/issues/7/comments"]
	if !ok || len(byPath) != 2 {
		t.Fatalf("host got %v, want a comment on #7 and a dispatch", byPath)
	}
	if c.Auth != "Bearer ghs_app1" || !strings.Contains(c.Body, marker) || !strings.Contains(c.Body, "Progressing at "+commitA) {
		t.Errorf("comment sent with %q: %s", c.Auth, c.Body)
	}
	d := byPath["POST /api/v3/repos/org/app/dispatches"]
	if d.Auth != "Bearer "+ghToken || !strings.Contains(d.Body, `"event_type":"Kustomization/apps.`+f.ns+`"`) {
		t.Errorf("dispatch sent with %q: %s", d.Auth, d.Body)
	}

	// The next event edits that comment, with the same installation token.
	sendEvent(t, s, prEvent("HealthCheckSucceeded"))
	writes := gh.writes()
	var edits []ghRequest
	for _, r := range writes {
		if r.Method == http.MethodPatch {
			edits = append(edits, r)
		}
	}
	if len(writes) != 2 || len(edits) != 1 || edits[0].Path != "/api/v3/repos/org/app/issues/comments/500" ||
		edits[0].Auth != "Bearer ghs_app1" || !strings.Contains(edits[0].Body, "HealthCheckSucceeded at") {
		t.Errorf("second event: host got %+v, want the comment 500 edited and a dispatch", writes)
	}
	if gh.tokens != 1 {
		t.Errorf("%d installation tokens asked for, want 1", gh.tokens)
	}

	// Without a change request no comment is written, and the commit-status
	// event reaches neither type.
	sendEvent(t, s, kustomizationEvent(f.ns, "info", "HealthCheckSucceeded", commitA, nil))
	sendEvent(t, s, kustomizationEvent(f.ns, "info", "ReconciliationSucceeded", commitA, map[string]string{
		"commit_status": "update", "event.toolkit.fluxcd.io/change_request": "7"}))
	writes = gh.writes()
	if len(writes) != 1 || writes[0].Path != "/api/v3/repos/org/app/dispatches" {
		t.Errorf("host got %+v, want only the dispatch of the event without a change request", writes)
	}
	out := logs.String()
	if !strings.Contains(out, "missing change_request metadata key") {
		t.Errorf("the dropped comment is not logged:\n%s", out)
	}
	for _, secret := range []string{"PRIVATE KEY", "ghs_app1", ghToken} {
		if strings.Contains(out, secret) {
			t.Errorf("the logs show %q:\n%s", secret, out)
		}
	}
}
