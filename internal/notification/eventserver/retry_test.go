package eventserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// events.Recorder is what the app passes as Options.Events.
var _ EventRecorder = (*events.Recorder)(nil)

const incidentToken = "inc-t0ken-s3cret"

// quickRetry is Flux's policy with waits short enough for tests.
var quickRetry = notifier.Retry{Max: 4, WaitMin: 100 * time.Millisecond, WaitMax: 200 * time.Millisecond}

// warnings records the Events the server would put on Alerts.
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) Warning(_ context.Context, obj client.Object, reason string, _ map[string]string, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, obj.GetNamespace()+"/"+obj.GetName()+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.got...)
}

// TestIncidentIORetriedThroughAlert: incident.io answers 503 twice, then
// takes the alert; the controller's request is answered at once, and the
// event arrives, once, on the third try.
func TestIncidentIORetriedThroughAlert(t *testing.T) {
	f := newFixture(t)
	svc := notifiertest.NewService(t)
	svc.Answer(http.StatusAccepted, `{"status":"success","deduplication_key":"x"}`)
	svc.FailNext(2, http.StatusServiceUnavailable)
	f.secret(t, "incident-io", map[string]string{"token": incidentToken})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.IncidentIOProvider,
		Address: svc.Server.URL + "/v2/alert_events/http/01HZX", SecretRef: &meta.LocalObjectReference{Name: "incident-io"}})
	f.alert(t, "a", nil)
	rec := &warnings{}
	s := newServer(t, Options{Retry: &quickRetry, Events: rec})

	e := event(f.ns, "podinfo", "artifact up to date")
	e.Severity = events.SeverityError
	start := time.Now()
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(mustJSON(t, e))))
	answered := time.Since(start)
	s.inflight.Wait()
	delivered := time.Since(start)

	if w.Code != http.StatusAccepted {
		t.Fatalf("code = %d", w.Code)
	}
	// Two waits of 100ms and 200ms come before the third try, after the
	// controller's request is answered: it is not held up by them.
	if delivered-answered < 200*time.Millisecond {
		t.Errorf("answered after %s, delivered after %s: want the answer 300ms before the delivery", answered, delivered)
	}
	reqs := svc.Requests()
	if len(reqs) != 3 {
		t.Fatalf("incident.io got %d requests, want 3 (503, 503, 202)", len(reqs))
	}
	for i, r := range reqs {
		if r.Method != http.MethodPost || r.Path != "/v2/alert_events/http/01HZX" || r.Header.Get("Authorization") != "Bearer "+incidentToken {
			t.Errorf("try %d: %s %s, Authorization %q", i+1, r.Method, r.Path, r.Header.Get("Authorization"))
		}
		if !bytes.Equal(r.Body, reqs[0].Body) {
			t.Errorf("try %d sent another body: %s", i+1, r.Body)
		}
	}
	var got struct {
		Title, Status, Description string
	}
	if err := json.Unmarshal(reqs[2].Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Title != "gitrepository/podinfo."+f.ns+": NewArtifact" || got.Status != "firing" || got.Description != "artifact up to date" {
		t.Errorf("incident.io got %+v", got)
	}
	if w := rec.all(); len(w) != 0 {
		t.Errorf("a delivery that succeeded recorded %q", w)
	}
}

// TestDeliveryFailureRecordedOnAlert: a refused delivery is not retried
// (400), and is told in the log, naming the Provider, the Alert and the
// object, and as a Warning Event on the Alert, never with the secret.
// A service that stays down is given up on after Flux's five tries.
func TestDeliveryFailureRecordedOnAlert(t *testing.T) {
	f := newFixture(t)
	refusing := notifiertest.NewService(t)
	refusing.Answer(http.StatusBadRequest, `{"result":"error","msg":"Invalid API key `+incidentToken+`"}`)
	down := notifiertest.NewService(t)
	down.Answer(http.StatusBadGateway, `{}`)
	f.secret(t, "zulip-bot", map[string]string{"username": "flux-bot@example.zulipchat.com", "password": incidentToken})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.ZulipProvider, Address: refusing.Server.URL,
		Channel: "deploys/flux", SecretRef: &meta.LocalObjectReference{Name: "zulip-bot"}})
	f.provider(t, "down", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.ZulipProvider, Address: down.Server.URL,
		Channel: "deploys/flux", SecretRef: &meta.LocalObjectReference{Name: "zulip-bot"}})
	f.alert(t, "a", nil)
	f.alert(t, "b", func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name = "down" })
	logs := &logBuffer{}
	s := newLoggingServer(t, logs)
	rec := &warnings{}
	s.opts.Retry, s.opts.Events = &notifier.Retry{Max: 4, WaitMin: time.Millisecond, WaitMax: time.Millisecond}, rec

	if code := sendEvent(t, s, event(f.ns, "podinfo", "stored artifact")); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	if n := len(refusing.Requests()); n != 1 {
		t.Errorf("the refusing Zulip got %d requests, want 1: a 400 is not retried", n)
	}
	if n := len(down.Requests()); n != 5 {
		t.Errorf("the Zulip that is down got %d requests, want 5", n)
	}
	object := "GitRepository/" + f.ns + "/podinfo"
	want := map[string]string{
		f.ns + "/a": f.ns + "/a " + notificationv1.NotificationDispatchFailedReason + " failed to send notification for " + object + ": posting to " +
			refusing.Server.URL + ": 400 Bad Request",
		f.ns + "/b": f.ns + "/b " + notificationv1.NotificationDispatchFailedReason + " failed to send notification for " + object + ": posting to " +
			down.Server.URL + ": giving up after 5 attempts: 502 Bad Gateway",
	}
	got := rec.all()
	if len(got) != 2 {
		t.Fatalf("recorded %q, want one Warning on each Alert", got)
	}
	for _, w := range got {
		alert, _, _ := strings.Cut(w, " ")
		if !strings.HasPrefix(w, want[alert]) {
			t.Errorf("recorded %q, want it to start %q", w, want[alert])
		}
		if strings.Contains(w, incidentToken) {
			t.Errorf("the Event shows the API key: %q", w)
		}
	}
	out := logs.String()
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "cannot forward event") {
			continue
		}
		for _, key := range []string{`"provider"=`, `"alert"="` + f.ns + `/`, `"involvedObject"="GitRepository/` + f.ns + `/podinfo"`} {
			if !strings.Contains(line, key) {
				t.Errorf("log line does not name %s: %s", key, line)
			}
		}
	}
	if !strings.Contains(out, "cannot forward event") || strings.Contains(out, incidentToken) {
		t.Errorf("want the failures logged without the API key:\n%s", out)
	}
}

func TestRetriedTypes(t *testing.T) {
	for kind, want := range map[string]bool{
		"generic": true, "generic-hmac": true, "slack": true, "alertmanager": true, "msteams": true, "zulip": true,
		"zoom": true, "pagerduty": true, "incident.io": true, "bitbucketserver": true,
		"sentry": false, "github": false, "gitlab": false, "gitea": false, "bitbucket": false, "azuredevops": false,
	} {
		if got := retried(kind); got != want {
			t.Errorf("retried(%q) = %v, want %v", kind, got, want)
		}
	}
}

// TestWebhookRetried: the webhook types this package posts itself retry
// too, with the same body (and signature) on every try.
func TestWebhookRetried(t *testing.T) {
	f := newFixture(t)
	svc := notifiertest.NewService(t)
	svc.FailNext(2, http.StatusServiceUnavailable)
	f.secret(t, "hmac", map[string]string{"token": "hm4c-key"})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GenericHMACProvider, Address: svc.Server.URL,
		SecretRef: &meta.LocalObjectReference{Name: "hmac"}})
	f.alert(t, "a", nil)
	s := newServer(t, Options{Retry: &notifier.Retry{Max: 4, WaitMin: time.Millisecond, WaitMax: time.Millisecond}})

	if code := sendEvent(t, s, event(f.ns, "podinfo", "stored artifact")); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	reqs := svc.Requests()
	if len(reqs) != 3 {
		t.Fatalf("webhook got %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if !bytes.Equal(r.Body, reqs[0].Body) || r.Header.Get("X-Signature") == "" ||
			r.Header.Get("X-Signature") != reqs[0].Header.Get("X-Signature") {
			t.Errorf("try %d differs from the first: %s %q", i+1, r.Body, r.Header.Get("X-Signature"))
		}
	}
}

// TestDeliveryFailureAsKubernetesEvent: with the recorder the app gives
// it, a refused delivery is a Warning Event on the Alert in the cluster.
func TestDeliveryFailureAsKubernetesEvent(t *testing.T) {
	f := newFixture(t)
	svc := notifiertest.NewService(t)
	svc.Answer(http.StatusForbidden, `{"message":"token `+incidentToken+` revoked"}`)
	f.secret(t, "incident-io", map[string]string{"token": incidentToken})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.IncidentIOProvider,
		Address: svc.Server.URL + "/v2/alert_events/http/01HZX", SecretRef: &meta.LocalObjectReference{Name: "incident-io"}})
	f.alert(t, "a", nil)
	s := newServer(t, Options{Events: clusterRecorder(t, f)})

	e := event(f.ns, "podinfo", "stored artifact")
	e.Severity = events.SeverityError
	sendEvent(t, s, e)
	alert := &notificationv1beta3.Alert{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "a"}}
	f.env.AssertEventPrefix(t, alert, notificationv1.NotificationDispatchFailedReason,
		"failed to send notification for GitRepository/"+f.ns+"/podinfo: posting to "+svc.Server.URL+": 403 Forbidden")
	var list corev1.EventList
	if err := f.env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range list.Items {
		if ev.Type != corev1.EventTypeWarning || strings.Contains(ev.Message, incidentToken) {
			t.Errorf("event %s %q: want a Warning without the token", ev.Type, ev.Message)
		}
	}
}

// clusterRecorder records Events in the test API server, as the app's
// recorder does.
func clusterRecorder(t *testing.T, f *fixture) *events.Recorder {
	t.Helper()
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{
		Interface: kubernetes.NewForConfigOrDie(f.env.Config).CoreV1().Events("")})
	t.Cleanup(broadcaster.Shutdown)
	kube := broadcaster.NewRecorder(f.env.Scheme, corev1.EventSource{Component: "notification-controller"})
	return events.NewRecorder(kube, f.env.Scheme, "notification-controller", "test", "")
}

// TestMetadataConflictAsKubernetesEvent: an Alert's eventMetadata and
// summary both setting summary, and the controller's revision beside the
// Alert's, are a MetadataAppendFailed Warning Event on the Alert in
// Flux's words; the event is still delivered.
func TestMetadataConflictAsKubernetesEvent(t *testing.T) {
	f := newFixture(t)
	sk := newSink(t, false)
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.GenericProvider, Address: sk.srv.URL})
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) {
		s.Summary = "prod"
		s.EventMetadata = map[string]string{"summary": "dev", "revision": "mine"}
	})
	s := newServer(t, Options{Events: clusterRecorder(t, f)})
	sendEvent(t, s, event(f.ns, "podinfo", "stored artifact"))
	got := decodeEvent(t, sk.expect(t, 1)[0].body)
	if got.Metadata["summary"] != "prod" || got.Metadata["revision"] != "main@sha1:abc" {
		t.Errorf("metadata = %v, want the spec's summary and the controller's revision", got.Metadata)
	}
	alert := &notificationv1beta3.Alert{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "a"}}
	f.env.AssertEvent(t, alert, notificationv1.MetadataAppendFailedReason, "metadata key conflicts detected "+
		"(please refer to the Alert API docs and Flux RFC 0008 for more information) map[revision:Alert object "+
		".spec.eventMetadata, involved object controller metadata summary:Alert object .spec.eventMetadata, "+
		"Alert object .spec.summary]")
}
