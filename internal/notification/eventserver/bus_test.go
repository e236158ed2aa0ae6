package eventserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

const natsPassword = "n4ts-pr0v1der-pw"

// TestNATSThroughAlert sends an event to the event server and reads it
// from a real NATS server, on the Provider's subject, published with the
// Secret's credentials.
func TestNATSThroughAlert(t *testing.T) {
	f := newFixture(t)
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Users: []*natsserver.User{{Username: "flux", Password: natsPassword}}})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL(), nats.UserInfo("flux", natsPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync("flux.events")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	f.secret(t, "nats-auth", map[string]string{"username": "flux", "password": natsPassword})
	f.secret(t, "nats-wrong", map[string]string{"username": "flux", "password": natsPassword + "-old"})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.NATSProvider, Address: ns.ClientURL(),
		Channel: "flux.events", SecretRef: &meta.LocalObjectReference{Name: "nats-auth"}})
	f.provider(t, "wrong", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.NATSProvider, Address: ns.ClientURL(),
		Channel: "flux.events", SecretRef: &meta.LocalObjectReference{Name: "nats-wrong"}})
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) { s.Summary = "podinfo in prod" })
	f.alert(t, "b", func(s *notificationv1beta3.AlertSpec) { s.ProviderRef.Name = "wrong" })
	logs := &logBuffer{}
	s := newLoggingServer(t, logs)

	sent := event(f.ns, "podinfo", "stored artifact for commit 'abc'")
	if code := sendEvent(t, s, sent); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	msg, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no message on flux.events: %v\nlogs:\n%s", err, logs.String())
	}
	var got events.Event
	if err := json.Unmarshal(msg.Data, &got); err != nil {
		t.Fatalf("message is not an event: %s", msg.Data)
	}
	if got.InvolvedObject != sent.InvolvedObject || got.Reason != sent.Reason || got.Message != sent.Message ||
		got.Severity != sent.Severity || !got.Timestamp.Equal(sent.Timestamp) || got.ReportingController != sent.ReportingController {
		t.Errorf("published %+v, sent %+v", got, sent)
	}
	if got.Metadata["revision"] != "main@sha1:abc" || got.Metadata["summary"] != "podinfo in prod" {
		t.Errorf("metadata = %v, want the revision and the Alert's summary", got.Metadata)
	}
	if extra, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Errorf("a second message arrived: %s", extra.Data)
	}
	out := logs.String()
	if !strings.Contains(out, "cannot forward event") || !strings.Contains(out, "Authorization Violation") {
		t.Errorf("the refused Provider is not logged:\n%s", out)
	}
	if strings.Contains(out, natsPassword) {
		t.Errorf("the password is in the logs:\n%s", out)
	}
}

// TestOTelThroughAlert checks the event server hands the otel type the
// Alert: the span's service is named after it.
func TestOTelThroughAlert(t *testing.T) {
	f := newFixture(t)
	var (
		mu  sync.Mutex
		got []*coltracepb.ExportTraceServiceRequest
	)
	collector := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Errorf("not OTLP: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, &req)
	}))
	t.Cleanup(collector.Close)
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.OTELProvider, Address: collector.URL + "/v1/traces"})
	f.alert(t, "traces", nil)
	var a notificationv1beta3.Alert
	if err := f.env.Client.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: "traces"}, &a); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, Options{})
	if code := sendEvent(t, s, event(f.ns, "podinfo", "stored artifact")); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("collector got %d exports, want 1", len(got))
	}
	res := map[string]string{}
	for _, kv := range got[0].ResourceSpans[0].Resource.Attributes {
		res[kv.Key] = kv.Value.GetStringValue()
	}
	if res["service.name"] != f.ns+"/traces" || res["service.namespace"] != f.ns || res["service.instance.id"] != string(a.UID) {
		t.Errorf("resource = %v, want the Alert %s/traces (uid %s)", res, f.ns, a.UID)
	}
	if name := got[0].ResourceSpans[0].ScopeSpans[0].Spans[0].Name; name != "GitRepository: "+f.ns+"/podinfo" {
		t.Errorf("span name = %q", name)
	}
}
