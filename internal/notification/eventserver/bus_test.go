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
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/eventhubfake"
	"github.com/weir-gitops/weir/internal/notification/secretcache"
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

const (
	hubKeyName = "flux-sender"
	hubKey     = "ZXZlbnQtc2VydmVyLWh1Yi1rZXktb25l"
	hubKeyNext = "ZXZlbnQtc2VydmVyLWh1Yi1rZXktdHdv"
)

func hubConnection(addr, key string) string {
	return "Endpoint=sb://" + addr + "/;SharedAccessKeyName=" + hubKeyName + ";SharedAccessKey=" + key + ";EntityPath=flux"
}

// TestAzureEventHubThroughAlert sends a Kustomization's event through an
// Alert to an azureeventhub Provider whose Secret holds a SAS connection
// string and whose certSecretRef trusts the fake's certificate; then the
// key is rotated, in the Secret and on the hub, and the next event is
// sent with the new one.
func TestAzureEventHubThroughAlert(t *testing.T) {
	f := newFixture(t)
	hub := eventhubfake.Start(t, eventhubfake.Credentials{KeyName: hubKeyName, Key: hubKey})
	f.secret(t, "hub-auth", map[string]string{"address": hubConnection(hub.Addr, hubKey)})
	f.secret(t, "hub-ca", map[string]string{"ca.crt": string(hub.CAPEM())})
	f.provider(t, "p", notificationv1beta3.ProviderSpec{Type: notificationv1beta3.AzureEventHubProvider,
		SecretRef: &meta.LocalObjectReference{Name: "hub-auth"}, CertSecretRef: &meta.LocalObjectReference{Name: "hub-ca"}})
	f.alert(t, "a", func(s *notificationv1beta3.AlertSpec) {
		s.EventSources = []notificationv1.CrossNamespaceObjectReference{{Kind: kustomizev1.KustomizationKind, Name: "apps"}}
	})
	secrets := startSecretCache(t)
	logs := &logBuffer{}
	s := newLoggingServerWith(t, logs, Options{SecretReader: secrets})

	sent := kustomizationEvent(f.ns, "info", "ReconciliationSucceeded", commitA, nil)
	if code := sendEvent(t, s, sent); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	msgs := hub.Messages()
	if len(msgs) != 1 {
		t.Fatalf("hub got %d messages, want 1; logs:\n%s", len(msgs), logs.String())
	}
	var got events.Event
	if err := json.Unmarshal(msgs[0].Data, &got); err != nil {
		t.Fatalf("message is not an event: %s", msgs[0].Data)
	}
	if msgs[0].Hub != "flux" || got.InvolvedObject != sent.InvolvedObject || got.Reason != sent.Reason ||
		got.Message != sent.Message || got.Severity != sent.Severity || got.ReportingController != sent.ReportingController ||
		got.Metadata["revision"] != "main@sha1:"+commitA {
		t.Errorf("hub %q got %+v, sent %+v", msgs[0].Hub, got, sent)
	}
	want := eventhubfake.PutToken{Type: eventhubfake.TokenTypeSAS, Audience: "amqps://" + hub.Addr + "/flux",
		KeyName: hubKeyName, Status: 202}
	if tokens := hub.Tokens(); len(tokens) != 1 || tokens[0] != want {
		t.Errorf("put-token = %+v, want [%+v]", tokens, want)
	}

	// The key is rotated: the hub takes the new one only.
	hub.SetCredentials(eventhubfake.Credentials{KeyName: hubKeyName, Key: hubKeyNext})
	var sec corev1.Secret
	if err := f.env.Client.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: "hub-auth"}, &sec); err != nil {
		t.Fatal(err)
	}
	sec.Data["address"] = []byte(hubConnection(hub.Addr, hubKeyNext))
	if err := f.env.Client.Update(t.Context(), &sec); err != nil {
		t.Fatal(err)
	}
	readsBefore := secrets.APIReads()
	waitSecretSeen(t, secrets, &sec)
	if code := sendEvent(t, s, kustomizationEvent(f.ns, "error", "HealthCheckFailed", commitB, nil)); code != http.StatusAccepted {
		t.Fatalf("code = %d", code)
	}
	tokens := hub.Tokens()
	if len(tokens) != 2 || tokens[1].Status != 202 || len(hub.Messages()) != 2 {
		t.Fatalf("after the rotation: put-token %+v, %d messages; want the new key accepted; logs:\n%s",
			tokens, len(hub.Messages()), logs.String())
	}
	// Two Secrets per event (secretRef, certSecretRef): the first event
	// read both, the one after the rotation only the changed one.
	if got := secrets.APIReads() - readsBefore; got != 1 {
		t.Errorf("the event after the rotation read %d Secrets from the API server, want 1 (the changed one)", got)
	}
	for _, k := range []string{hubKey, hubKeyNext} {
		if strings.Contains(logs.String(), k) {
			t.Errorf("a key is in the logs:\n%s", logs.String())
		}
	}
}

// startSecretCache runs the event server's Secret cache against the test
// API server until the test ends.
func startSecretCache(t *testing.T) *secretcache.Cache {
	t.Helper()
	env := testenv.Get(t)
	c, err := secretcache.New(env.Config, env.Client, "")
	if err != nil {
		t.Fatal(err)
	}
	// The watch stops with the test's context.
	go func() { _ = c.Start(t.Context()) }()
	if !c.WaitForSync(t.Context()) {
		t.Fatal("the Secret watch did not sync")
	}
	return c
}

// waitSecretSeen waits until the cache's watch holds sec's version: from
// then on, the next event must use it.
func waitSecretSeen(t *testing.T, c *secretcache.Cache, sec *corev1.Secret) {
	t.Helper()
	key := client.ObjectKeyFromObject(sec)
	for {
		if v, ok := c.Version(key); ok && v == sec.ResourceVersion {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the watch never saw the Secret's update")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
