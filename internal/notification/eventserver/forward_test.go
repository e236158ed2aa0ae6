package eventserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

func genericProvider(address string) notificationv1beta3.ProviderSpec {
	return notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GenericProvider, Address: address}
}

func TestGenericReceivesMatchingEvent(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL+"/hook"))
	f.alert(t, "a", nil)
	s := newServer(t, Options{})

	e := event(f.ns, "podinfo", "stored artifact")
	if code := sendEvent(t, s, e); code != http.StatusAccepted {
		t.Fatalf("code = %d, want 202", code)
	}
	got := sk.expect(t, 1)[0]
	if got.path != "/hook" || got.header.Get("Content-Type") != "application/json" ||
		got.header.Get("Gotk-Component") != "source-controller" {
		t.Errorf("request = %s %v", got.path, got.header)
	}
	if diff := cmp.Diff(e, decodeEvent(t, got.body)); diff != "" {
		t.Errorf("forwarded event (-want +got):\n%s", diff)
	}

	// Another name is not selected.
	sendEvent(t, s, event(f.ns, "other", "stored artifact"))
	sk.expect(t, 1)
}

func TestStarWithMatchLabels(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.gitRepository(t, "team-a", map[string]string{"team": "a"})
	f.gitRepository(t, "team-b", map[string]string{"team": "b"})
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) {
		s.EventSources = []notificationv1.CrossNamespaceObjectReference{
			{Kind: sourcev1.GitRepositoryKind, Name: "*", MatchLabels: map[string]string{"team": "a"}},
		}
	})
	s := newServer(t, Options{})

	sendEvent(t, s, event(f.ns, "team-b", "stored artifact"))
	sk.expect(t, 0)
	sendEvent(t, s, event(f.ns, "team-a", "stored artifact"))
	if got := decodeEvent(t, sk.expect(t, 1)[0].body); got.InvolvedObject.Name != "team-a" {
		t.Errorf("forwarded %s", got.InvolvedObject.Name)
	}
	// An object that does not exist has no labels to match.
	sendEvent(t, s, event(f.ns, "gone", "stored artifact"))
	sk.expect(t, 1)
}

func TestErrorOnlyAlert(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) { s.EventSeverity = notificationv1beta3.EventSeverityError })
	s := newServer(t, Options{})

	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	sk.expect(t, 0)
	e := event(f.ns, "podinfo", "clone failed")
	e.Severity = events.SeverityError
	sendEvent(t, s, e)
	if got := decodeEvent(t, sk.expect(t, 1)[0].body); got.Severity != events.SeverityError {
		t.Errorf("severity = %s", got.Severity)
	}
}

func TestInclusionAndExclusionLists(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) {
		s.InclusionList = []string{"^stored"}
		s.ExclusionList = []string{"no changes"}
	})
	s := newServer(t, Options{})

	for _, msg := range []string{"clone failed", "stored artifact, no changes", "stored artifact for main@sha1:abc"} {
		sendEvent(t, s, event(f.ns, "podinfo", msg))
	}
	if got := decodeEvent(t, sk.expect(t, 1)[0].body); got.Message != "stored artifact for main@sha1:abc" {
		t.Errorf("forwarded %q", got.Message)
	}
}

func TestSuspendedAlertAndProvider(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	spec := genericProvider(sk.srv.URL)
	spec.Suspend = true
	f.provider(t, "suspended", spec)
	f.alert(t, "suspended-alert", func(s *notificationv1beta3.AlertSpec) { s.Suspend = true })
	f.alert(t, "to-suspended-provider", func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name = "suspended" })
	s := newServer(t, Options{})

	if code := sendEvent(t, s, event(f.ns, "podinfo", "stored artifact")); code != http.StatusAccepted {
		t.Errorf("code = %d", code)
	}
	sk.expect(t, 0)
}

func TestEventMetadataMerged(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) {
		s.Summary = "cluster addons"
		s.EventMetadata = map[string]string{"env": "prod", "revision": "ignored"}
	})
	s := newServer(t, Options{})

	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	got := decodeEvent(t, sk.expect(t, 1)[0].body)
	want := map[string]string{"revision": "main@sha1:abc", "env": "prod", "summary": "cluster addons"}
	if diff := cmp.Diff(want, got.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

func TestGenericHMACSignature(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.secret(t, "hmac", map[string]string{"token": "s3cret"})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GenericHMACProvider, Address: sk.srv.URL,
		SecretRef: &meta.LocalObjectReference{Name: "hmac"}})
	f.alert(t, "a", nil)
	s := newServer(t, Options{})

	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	got := sk.expect(t, 1)[0]
	// Verify as a receiver would: recompute over the raw body.
	if sig, want := got.header.Get("X-Signature"), sign("s3cret", got.body); !hmac.Equal([]byte(sig), []byte(want)) {
		t.Errorf("X-Signature = %q, want %q", sig, want)
	}
}

func TestSlackPayload(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.secret(t, "slack", map[string]string{"token": "xoxb-1"})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.SlackProvider, Address: sk.srv.URL + "/api/chat.postMessage",
		Channel: "general", Username: "weir", SecretRef: &meta.LocalObjectReference{Name: "slack"}})
	f.alert(t, "a", nil)
	s := newServer(t, Options{})

	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	got := sk.expect(t, 1)[0]
	if got.header.Get("Authorization") != "Bearer xoxb-1" {
		t.Errorf("Authorization = %q", got.header.Get("Authorization"))
	}
	var p map[string]any
	if err := json.Unmarshal(got.body, &p); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"channel": "general", "username": "weir",
		"attachments": []any{map[string]any{
			"color": "good", "author_name": "gitrepository/podinfo." + f.ns, "text": "stored artifact",
			"mrkdwn_in": []any{"text"},
			"fields":    []any{map[string]any{"title": "revision", "value": "main@sha1:abc", "short": false}},
		}},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("slack payload (-want +got):\n%s", diff)
	}
}

func TestDiscordSlackEndpoint(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.DiscordProvider, Address: sk.srv.URL + "/api/webhooks/1/tok"})
	f.alert(t, "a", nil)
	s := newServer(t, Options{})

	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	if got := sk.expect(t, 1)[0]; got.path != "/api/webhooks/1/tok/slack" {
		t.Errorf("path = %s", got.path)
	}
}

func TestAlertmanagerWithBasicAuthAddress(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	// Flux documents basic auth for Alertmanager as userinfo in the
	// Secret's address.
	f.secret(t, "am", map[string]string{"address": "http://am-user:am-pass@" + sk.srv.Listener.Addr().String() + "/api/v2/alerts"})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.AlertManagerProvider,
		SecretRef: &meta.LocalObjectReference{Name: "am"}})
	f.alert(t, "a", nil)
	s := newServer(t, Options{})

	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	got := sk.expect(t, 1)[0]
	req, _ := http.NewRequest(http.MethodPost, "/", nil)
	req.Header = got.header
	if u, p, ok := req.BasicAuth(); !ok || u != "am-user" || p != "am-pass" || got.path != "/api/v2/alerts" {
		t.Errorf("request = %s, basic auth %q %q %v", got.path, u, p, ok)
	}
	var alerts []amAlert
	if err := json.Unmarshal(got.body, &alerts); err != nil || len(alerts) != 1 {
		t.Fatalf("body = %s (%v)", got.body, err)
	}
	if a := alerts[0]; a.Status != "firing" || a.Labels["alertname"] != "FluxGitRepositoryNewArtifact" ||
		a.Annotations["message"] != "stored artifact" {
		t.Errorf("alert = %+v", a)
	}
}

func TestSecretAddressAndHeaders(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.secret(t, "webhook", map[string]string{
		"address": sk.srv.URL + "/from-secret",
		"headers": "X-Api-Key: k1\nX-Team: platform\n",
	})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GenericProvider,
		SecretRef: &meta.LocalObjectReference{Name: "webhook"}})
	f.alert(t, "a", nil)
	s := newServer(t, Options{SecretReader: f.env.Client})

	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	got := sk.expect(t, 1)[0]
	if got.path != "/from-secret" || got.header.Get("X-Api-Key") != "k1" || got.header.Get("X-Team") != "platform" {
		t.Errorf("request = %s %v", got.path, got.header)
	}
}

func TestCertSecretRef(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, true)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sk.srv.Certificate().Raw})
	f.secret(t, "ca", map[string]string{"ca.crt": string(ca)})
	f.provider(t, "p", genericProvider(sk.srv.URL))
	spec := genericProvider(sk.srv.URL)
	spec.CertSecretRef = &meta.LocalObjectReference{Name: "ca"}
	f.provider(t, "trusting", spec)
	f.alert(t, "untrusting", nil)
	s := newServer(t, Options{})

	// Without the CA, the TLS handshake fails and nothing arrives.
	sendEvent(t, s, event(f.ns, "podinfo", "first"))
	sk.expect(t, 0)
	f.alert(t, "trusting", func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name = "trusting" })
	sendEvent(t, s, event(f.ns, "podinfo", "second"))
	sk.expect(t, 1)
}

func TestRateLimit(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", nil)
	s := newServer(t, Options{RateLimitInterval: time.Minute})
	now := time.Now()
	s.limiter.now = func() time.Time { return now }

	e := event(f.ns, "podinfo", "stored artifact")
	if code := sendEvent(t, s, e); code != http.StatusAccepted {
		t.Fatalf("first: %d", code)
	}
	e.Timestamp = e.Timestamp.Add(time.Second)
	if code := sendEvent(t, s, e); code != http.StatusTooManyRequests {
		t.Fatalf("duplicate: %d, want 429", code)
	}
	sk.expect(t, 1)
	now = now.Add(time.Minute)
	if code := sendEvent(t, s, e); code != http.StatusAccepted {
		t.Fatalf("after the interval: %d", code)
	}
	sk.expect(t, 2)
}

func TestCrossNamespaceEventSources(t *testing.T) {
	f := newFixture(t)
	other := f.env.Namespace(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) { s.EventSources[0].Namespace = other })

	sendEvent(t, newServer(t, Options{NoCrossNamespaceRefs: true}), event(other, "podinfo", "refused"))
	sk.expect(t, 0)
	sendEvent(t, newServer(t, Options{}), event(other, "podinfo", "allowed"))
	if got := decodeEvent(t, sk.expect(t, 1)[0].body); got.Message != "allowed" {
		t.Errorf("forwarded %q", got.Message)
	}
}

func TestRefusedAndDroppedEvents(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", nil)
	s := newServer(t, Options{})

	trace := event(f.ns, "podinfo", "tracing")
	trace.Severity = events.SeverityTrace
	noName := event(f.ns, "", "x")
	tests := []struct {
		name string
		body []byte
		want int
	}{
		{name: "bad JSON", body: []byte("{not json"), want: http.StatusBadRequest},
		{name: "missing name", body: mustJSON(t, noName), want: http.StatusBadRequest},
		{name: "trace accepted, not forwarded", body: mustJSON(t, trace), want: http.StatusAccepted},
	}
	for _, tt := range tests {
		if code := post(t, s, tt.body); code != tt.want {
			t.Errorf("%s: code = %d, want %d", tt.name, code, tt.want)
		}
	}
	sk.expect(t, 0)
}

// TestMisconfiguredProviderType: a Provider its type cannot deliver with
// (zoom without its token) does not hold back another Alert's.
func TestMisconfiguredProviderType(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.ZoomProvider, Address: sk.srv.URL})
	f.provider(t, "generic", genericProvider(sk.srv.URL))
	f.alert(t, "a", nil)
	f.alert(t, "b", func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name = "generic" })
	s := newServer(t, Options{})

	if code := sendEvent(t, s, event(f.ns, "podinfo", "stored artifact")); code != http.StatusAccepted {
		t.Errorf("code = %d", code)
	}
	// Only the generic Provider's Alert delivers.
	sk.expect(t, 1)
}

func TestStartServesUntilCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := NewServer(addr, testenv.Get(t).Client, logr.Discard(), Options{})
	if s.NeedLeaderElection() {
		t.Error("NeedLeaderElection() = true")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	testenv.Eventually(t, 10*time.Second, func(_ context.Context) (bool, string) {
		resp, err := http.Post("http://"+addr+"/", "application/json", nil)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusBadRequest, resp.Status
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start() = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after cancel")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// As Flux's event server: the event marked commit_status: update (by a
// Flux controller under its group, by weir's bare) is for the commit-status
// types; every other type drops it, and takes the next one.
func TestCommitStatusUpdateDroppedForOtherTypes(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	for _, kind := range []string{notificationv1beta3.GenericProvider, notificationv1beta3.SlackProvider,
		notificationv1beta3.MSTeamsProvider, notificationv1beta3.AlertManagerProvider} {
		f.provider(t, kind, notificationv1beta3.ProviderSpec{Type: kind, Address: sk.srv.URL + "/" + kind})
		f.alert(t, kind, func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name = kind })
	}
	s := newServer(t, Options{})
	tests := []struct {
		name     string
		metadata map[string]string
		want     int
	}{
		{name: "prefixed", metadata: map[string]string{"source.toolkit.fluxcd.io/commit_status": "update"}},
		{name: "bare", metadata: map[string]string{"commit_status": "update"}},
		{name: "an annotation is not the mark", metadata: map[string]string{"event.toolkit.fluxcd.io/commit_status": "update"}, want: 4},
		{name: "another value", metadata: map[string]string{"commit_status": "pending"}, want: 4},
	}
	total := 0
	for _, tt := range tests {
		e := event(f.ns, "podinfo", "stored artifact: "+tt.name)
		e.Metadata = tt.metadata
		if code := sendEvent(t, s, e); code != http.StatusAccepted {
			t.Fatalf("%s: code = %d", tt.name, code)
		}
		total += tt.want
		sk.expect(t, total)
	}
}

// Flux's controllers prefix their keys with the object's group and send
// the object's RFC-0008 annotations under event.toolkit.fluxcd.io/; every
// type gets them bare, in Flux's order of precedence.
func TestFluxPrefixedMetadataForwardedBare(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", genericProvider(sk.srv.URL))
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) {
		s.Summary = "from the alert"
		s.EventMetadata = map[string]string{"env": "prod", "revision": "ignored", "team": "alert"}
	})
	s := newServer(t, Options{})
	e := event(f.ns, "podinfo", "stored artifact")
	e.Metadata = map[string]string{
		"source.toolkit.fluxcd.io/revision": "main@sha1:abc", "source.toolkit.fluxcd.io/token": "internal",
		"source.toolkit.fluxcd.io/digest": "sha256:1", "event.toolkit.fluxcd.io/team": "annotation",
		"event.toolkit.fluxcd.io/owner": "web", "kustomize.toolkit.fluxcd.io/other": "dropped",
	}
	sendEvent(t, s, e)
	got := decodeEvent(t, sk.expect(t, 1)[0].body)
	want := map[string]string{"revision": "main@sha1:abc", "env": "prod", "team": "alert", "owner": "web", "summary": "from the alert"}
	if diff := cmp.Diff(want, got.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

// slowReader holds every read until release is closed: a Secret read
// waiting on the client's rate limit.
type slowReader struct {
	client.Reader
	release chan struct{}
}

func (r slowReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	<-r.release
	return r.Reader.Get(ctx, key, obj, opts...)
}

// The controller's request is answered before the Provider's Secrets are
// read: a slow read delays the delivery, never the controller.
func TestSecretsReadAfterTheAnswer(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.secret(t, "token", map[string]string{"token": "t"})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GenericHMACProvider, Address: sk.srv.URL,
		SecretRef: &meta.LocalObjectReference{Name: "token"}})
	f.alert(t, "a", nil)
	release := make(chan struct{})
	s := newServer(t, Options{SecretReader: slowReader{Reader: f.env.Client, release: release}})
	body, err := json.Marshal(event(f.ns, "podinfo", "stored artifact"))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("code = %d, want 202 before the Secret is read", rec.Code)
	}
	sk.expect(t, 0)
	close(release)
	s.inflight.Wait()
	sk.expect(t, 1)
}
