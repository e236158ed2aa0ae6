package eventserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

const (
	ghToken = "ghp_s3cr3tT0ken"
	commitA = "5394cb7f48332b2de7c17dd8b8384bbc84b7e738"
	commitB = "9e8d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a6f7e8d"
)

// ghStatus is a commit status as the fake GitHub keeps it.
type ghStatus struct {
	sha, State, Context, Description string
}

// fakeGitHub speaks the two calls of GitHub Enterprise's REST API a
// commit status needs: the combined status of a commit, and a new status.
type fakeGitHub struct {
	srv      *httptest.Server
	mu       sync.Mutex
	statuses []ghStatus // oldest first
	refuse   bool
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	g := &fakeGitHub{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/repos/org/app/commits/{sha}/status", func(w http.ResponseWriter, r *http.Request) {
		if !g.authorized(w, r) {
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		latest := map[string]ghStatus{}
		for _, s := range g.statuses {
			if s.sha == r.PathValue("sha") {
				latest[s.Context] = s
			}
		}
		out := []map[string]string{}
		for _, s := range latest {
			out = append(out, map[string]string{"state": s.State, "context": s.Context, "description": s.Description})
		}
		writeJSONAnswer(w, http.StatusOK, map[string]any{"sha": r.PathValue("sha"), "statuses": out})
	})
	mux.HandleFunc("POST /api/v3/repos/org/app/statuses/{sha}", func(w http.ResponseWriter, r *http.Request) {
		if !g.authorized(w, r) {
			return
		}
		var s ghStatus
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &s); err != nil || s.State == "" {
			writeJSONAnswer(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
			return
		}
		s.sha = r.PathValue("sha")
		g.mu.Lock()
		g.statuses = append(g.statuses, s)
		g.mu.Unlock()
		writeJSONAnswer(w, http.StatusCreated, map[string]string{"state": s.State})
	})
	g.srv = httptest.NewServer(mux)
	t.Cleanup(g.srv.Close)
	return g
}

// authorized answers 401 for a wrong token, quoting it back as a
// careless proxy would.
func (g *fakeGitHub) authorized(w http.ResponseWriter, r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	if g.refuse || auth != "Bearer "+ghToken {
		writeJSONAnswer(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials: " + auth})
		return false
	}
	return true
}

func (g *fakeGitHub) got() []ghStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ghStatus(nil), g.statuses...)
}

func writeJSONAnswer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// kustomizationEvent is an event of the Kustomization ns/apps at the
// commit sha, as kustomize-controller sends it.
func kustomizationEvent(ns, severity, reason, sha string, md map[string]string) events.Event {
	m := map[string]string{"revision": "main@sha1:" + sha}
	for k, v := range md {
		m[k] = v
	}
	return events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind,
			Namespace: ns, Name: "apps"},
		Severity: severity, Reason: reason, Message: reason + " at " + sha, Metadata: m,
		ReportingController: "kustomize-controller",
	}
}

// logBuffer collects every log line of a server.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLoggingServer(t *testing.T, logs *logBuffer) *Server {
	t.Helper()
	return newLoggingServerWith(t, logs, Options{})
}

func newLoggingServerWith(t *testing.T, logs *logBuffer, opts Options) *Server {
	t.Helper()
	log := funcr.New(func(prefix, args string) {
		l := logs
		l.mu.Lock()
		defer l.mu.Unlock()
		l.buf.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 1})
	return NewServer("127.0.0.1:0", testenv.Get(t).Client, log, opts)
}

func TestGitHubCommitStatusThroughAlert(t *testing.T) {
	f := newFixture(t)
	gh := newFakeGitHub(t)
	f.secret(t, "github-token", map[string]string{"token": ghToken + "\n"})
	p := &notificationv1beta3.Provider{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "p"},
		Spec: notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GitHubProvider, Address: gh.srv.URL + "/org/app",
			SecretRef: &meta.LocalObjectReference{Name: "github-token"}},
	}
	f.env.Create(t, p)
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) {
		s.EventSources = []notificationv1.CrossNamespaceObjectReference{{Kind: kustomizev1.KustomizationKind, Name: "apps"}}
	})
	logs := &logBuffer{}
	s := newLoggingServer(t, logs)
	wantKey := "kustomization/apps/" + strings.Split(string(p.UID), "-")[0]

	steps := []struct {
		name string
		e    events.Event
		want []ghStatus // every status the host holds after the step
	}{
		{name: "progressing sets nothing",
			e: kustomizationEvent(f.ns, "info", "Progressing", commitA, map[string]string{"commit_status": "update"})},
		{name: "an info event that ends nothing sets nothing",
			e: kustomizationEvent(f.ns, "info", "HealthCheckSucceeded", commitA, nil)},
		{name: "reconciliation succeeded",
			e:    kustomizationEvent(f.ns, "info", "ReconciliationSucceeded", commitA, map[string]string{"commit_status": "update"}),
			want: []ghStatus{{commitA, "success", wantKey, "reconciliation succeeded"}}},
		{name: "the next commit fails",
			e: kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitB, nil),
			want: []ghStatus{{commitA, "success", wantKey, "reconciliation succeeded"},
				{commitB, "failure", wantKey, "health check failed"}}},
		{name: "the same failure again is not posted",
			e: kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitB, map[string]string{"retry": "2"}),
			want: []ghStatus{{commitA, "success", wantKey, "reconciliation succeeded"},
				{commitB, "failure", wantKey, "health check failed"}}},
		{name: "an OCI artifact's origin revision names the commit",
			e: kustomizationEvent(f.ns, "info", "ReconciliationSucceeded", commitB, map[string]string{
				"commit_status": "update", "revision": "latest@sha256:" + strings.Repeat("ab", 32), "originRevision": "main@sha1:" + commitB}),
			want: []ghStatus{{commitA, "success", wantKey, "reconciliation succeeded"},
				{commitB, "failure", wantKey, "health check failed"},
				{commitB, "success", wantKey, "reconciliation succeeded"}}},
	}
	for _, st := range steps {
		if code := sendEvent(t, s, st.e); code != http.StatusAccepted {
			t.Fatalf("%s: code = %d", st.name, code)
		}
		got := gh.got()
		if len(got) != len(st.want) {
			t.Fatalf("%s: host holds %+v, want %+v", st.name, got, st.want)
		}
		for i := range got {
			if got[i] != st.want[i] {
				t.Errorf("%s: status %d = %+v, want %+v", st.name, i, got[i], st.want[i])
			}
		}
	}

	// A refusal is logged, without the token the host quoted.
	gh.refuse = true
	sendEvent(t, s, kustomizationEvent(f.ns, "error", "BuildFailed", commitA, nil))
	out := logs.String()
	if !strings.Contains(out, "cannot forward event") || !strings.Contains(out, "401") {
		t.Errorf("refusal not logged:\n%s", out)
	}
	if strings.Contains(out, ghToken) {
		t.Errorf("the token is in the logs:\n%s", out)
	}
}

func TestCommitStatusExprAndMisconfiguredProviders(t *testing.T) {
	f := newFixture(t)
	gh := newFakeGitHub(t)
	f.secret(t, "github-token", map[string]string{"token": ghToken})
	secret := &meta.LocalObjectReference{Name: "github-token"}
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GitHubProvider, Address: gh.srv.URL + "/org/app",
		SecretRef: secret, CommitStatusExpr: `"flux/" + alert.metadata.name + "/" + event.metadata.env + "/" + event.involvedObject.name`})
	f.provider(t, "no-repo", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GitHubProvider, Address: gh.srv.URL + "/org",
		SecretRef: secret})
	f.provider(t, "bad-expr", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GitHubProvider, Address: gh.srv.URL + "/org/app",
		SecretRef: secret, CommitStatusExpr: `event.(`})
	f.provider(t, "zoom", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.ZoomProvider, Address: gh.srv.URL})
	source := []notificationv1.CrossNamespaceObjectReference{{Kind: kustomizev1.KustomizationKind, Name: "apps"}}
	for name, provider := range map[string]string{"a": "p", "b": "no-repo", "c": "bad-expr", "d": "zoom"} {
		f.alert(t, name, func(s *notificationv1beta3.AlertSpec) {
			s.ProviderRef.Name, s.EventSources = provider, source
			s.EventMetadata = map[string]string{"env": "prod"}
		})
	}
	logs := &logBuffer{}
	s := newLoggingServer(t, logs)

	sendEvent(t, s, kustomizationEvent(f.ns, "info", "ReconciliationSucceeded", commitA, map[string]string{"commit_status": "update"}))
	got := gh.got()
	if len(got) != 1 || got[0].Context != "flux/a/prod/apps" {
		t.Fatalf("host holds %+v, want one status keyed flux/a/prod/apps", got)
	}
	out := logs.String()
	for _, want := range []string{`<owner>/<repo>`, "commitStatusExpr does not compile"} {
		if !strings.Contains(out, want) {
			t.Errorf("log does not say %q:\n%s", want, out)
		}
	}
	// As in Flux, the commit status update was dropped for zoom before its
	// Secret was looked for; the next event is not.
	if strings.Contains(out, "zoom provider") {
		t.Errorf("the commit status update reached the zoom provider:\n%s", out)
	}
	sendEvent(t, s, kustomizationEvent(f.ns, "info", "Progressing", commitA, nil))
	if out := logs.String(); !strings.Contains(out, "zoom provider needs the token key") {
		t.Errorf("log does not say the zoom provider is misconfigured:\n%s", out)
	}
}
