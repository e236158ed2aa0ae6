package eventserver

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

// received is one request a provider got.
type received struct {
	path   string
	header http.Header
	body   []byte
}

// sink is a provider endpoint on 127.0.0.1 recording what it receives.
type sink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newSink(t *testing.T, tlsServer bool) *sink {
	t.Helper()
	s := &sink{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, received{path: r.URL.Path, header: r.Header.Clone(), body: body})
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	if tlsServer {
		s.srv = httptest.NewUnstartedServer(h)
		// Handshakes refused on purpose would clutter the test output.
		s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.srv.StartTLS()
	} else {
		s.srv = httptest.NewServer(h)
	}
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) got() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.reqs...)
}

// expect fails unless the sink received exactly n requests.
func (s *sink) expect(t *testing.T, n int) []received {
	t.Helper()
	got := s.got()
	if len(got) != n {
		t.Fatalf("provider received %d requests, want %d", len(got), n)
	}
	return got
}

type fixture struct {
	env *testenv.Env
	ns  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := testenv.Get(t)
	return &fixture{env: env, ns: env.Namespace(t)}
}

func (f *fixture) secret(t *testing.T, name string, data map[string]string) {
	t.Helper()
	f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}, StringData: data})
}

func (f *fixture) provider(t *testing.T, name string, spec notificationv1beta3.ProviderSpec) {
	t.Helper()
	f.env.Create(t, &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}, Spec: spec})
}

// alert creates an Alert in the fixture's namespace forwarding to the
// provider named "p".
func (f *fixture) alert(t *testing.T, name string, change func(*notificationv1beta3.AlertSpec)) {
	t.Helper()
	a := &notificationv1beta3.Alert{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: notificationv1beta3.AlertSpec{
			ProviderRef:  meta.LocalObjectReference{Name: "p"},
			EventSources: []notificationv1.CrossNamespaceObjectReference{{Kind: sourcev1.GitRepositoryKind, Name: "podinfo"}},
		},
	}
	if change != nil {
		change(&a.Spec)
	}
	f.env.Create(t, a)
}

func (f *fixture) gitRepository(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	f.env.Create(t, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: labels},
		Spec:       sourcev1.GitRepositorySpec{URL: "https://example.com/repo.git", Interval: metav1.Duration{Duration: time.Minute}},
	})
}

// event returns an info event about the GitRepository ns/name.
func event(ns, name, message string) events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind,
			Namespace: ns, Name: name},
		Severity: events.SeverityInfo, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Message: message,
		Reason: "NewArtifact", Metadata: map[string]string{"revision": "main@sha1:abc"}, ReportingController: "source-controller",
	}
}

func newServer(t *testing.T, opts Options) *Server {
	t.Helper()
	return NewServer("127.0.0.1:0", testenv.Get(t).Client, testr.NewWithOptions(t, testr.Options{Verbosity: 1}), opts)
}

// post sends body to the server, waits for its deliveries and returns the
// status code.
func post(t *testing.T, s *Server, body []byte) int {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	s.inflight.Wait()
	return rec.Code
}

func sendEvent(t *testing.T, s *Server, e events.Event) int {
	t.Helper()
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return post(t, s, body)
}

func decodeEvent(t *testing.T, body []byte) events.Event {
	t.Helper()
	var e events.Event
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("provider got %s: %v", body, err)
	}
	return e
}
