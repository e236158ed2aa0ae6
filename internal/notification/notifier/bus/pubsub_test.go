package bus

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpfake"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// startPubSub runs the Pub/Sub client's own fake on 127.0.0.1 with the
// topic projects/weir-test/topics/flux, and points the client at it the
// way Google documents for emulators.
func startPubSub(t *testing.T, opts ...pstest.ServerReactorOption) *pstest.Server {
	t.Helper()
	srv := pstest.NewServerWithAddress("127.0.0.1:0", opts...)
	t.Cleanup(func() { _ = srv.Close() })
	if _, err := srv.GServer.CreateTopic(context.Background(), &pb.Topic{Name: "projects/weir-test/topics/flux"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(emulatorHostEnv, srv.Addr)
	return srv
}

func TestPubSubPublishesTheEvent(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		want    map[string]string
	}{
		{name: "with headers as attributes", headers: map[string]string{"cluster": "prod-eu", "team": "platform"},
			want: map[string]string{"cluster": "prod-eu", "team": "platform"}},
		{name: "without headers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startPubSub(t)
			n, err := New(notifier.Options{Type: "googlepubsub", Address: "weir-test", Channel: "flux",
				Token: `{"type":"service_account","private_key":"` + password + `"}`, Headers: tt.headers})
			if err != nil {
				t.Fatal(err)
			}
			e := sampleEvent(events.SeverityError)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			if err := n.Post(ctx, e); err != nil {
				t.Fatalf("Post() = %v", err)
			}
			t.Logf("client, publish and close took %s", time.Since(start))
			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("fake got %d messages, want 1", len(msgs))
			}
			m := msgs[0]
			if m.Topic != "projects/weir-test/topics/flux" {
				t.Errorf("topic = %q", m.Topic)
			}
			if diff := cmp.Diff(tt.want, m.Attributes); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
			var got events.Event
			if err := json.Unmarshal(m.Data, &got); err != nil {
				t.Fatalf("message is not an event: %s", m.Data)
			}
			if diff := cmp.Diff(e, got); diff != "" {
				t.Errorf("event (-sent +published):\n%s", diff)
			}
			notifiertest.Golden(t, filepath.Join("testdata", "googlepubsub.json"), m.Data, "http://fake", *update)
		})
	}
}

func TestPubSubReportsRefusals(t *testing.T) {
	tests := []struct {
		name    string
		topic   string
		reactor []pstest.ServerReactorOption
		closed  bool
		want    string
	}{
		{name: "no such topic", topic: "missing", want: "NotFound"},
		{name: "permission denied", topic: "flux", want: "PermissionDenied",
			reactor: []pstest.ServerReactorOption{pstest.WithErrorInjection("Publish", codes.PermissionDenied,
				"User not authorized to perform this action.")}},
		{name: "unreachable", topic: "flux", closed: true, want: "projects/weir-test/topics/flux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			startPubSub(t, tt.reactor...)
			if tt.closed {
				t.Setenv(emulatorHostEnv, closedPort(t))
			}
			n, err := New(notifier.Options{Type: "googlepubsub", Address: "weir-test", Channel: tt.topic,
				Password: password})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			assertMentions(t, n.Post(ctx, sampleEvent(events.SeverityError)), tt.want)
		})
	}
}

// startTLSPubSub serves Pub/Sub's publisher over TLS, as Google does,
// checking each call's bearer token (gcpfake.StartPubSub), and points the
// client at it.
func startTLSPubSub(t *testing.T) *gcpfake.PubSub {
	t.Helper()
	srv := gcpfake.StartPubSub(t)
	srv.AddTopic("weir-test", "flux")
	srv.Accept("ya29.identity", "the identity")
	saved := PubSubClientOptions
	PubSubClientOptions = srv.ClientOptions()
	t.Cleanup(func() { PubSubClientOptions = saved })
	return srv
}

// TestPubSubWithWorkloadIdentity: without a token, every Publish carries
// the access token of the Provider's cloud identity.
func TestPubSubWithWorkloadIdentity(t *testing.T) {
	srv := startTLSPubSub(t)
	var asked []string
	n, err := New(notifier.Options{Type: "googlepubsub", Address: "weir-test", Channel: "flux",
		ServiceAccountName: "notify", Identity: stubIdentity{&asked}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Post(ctx, sampleEvent(events.SeverityInfo)); err != nil {
		t.Fatalf("Post() = %v", err)
	}
	calls := srv.Publishes()
	if len(calls) == 0 || slices.ContainsFunc(calls, func(p gcpfake.Publish) bool { return p.Bearer != "the identity" || p.Code != codes.OK }) || len(asked) == 0 {
		t.Errorf("publishes %+v (identity asked %q), want the identity's token on every call", calls, asked)
	}

	n, _ = New(notifier.Options{Type: "googlepubsub", Address: "weir-test", Channel: "flux", Identity: noIdentity{}})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	assertMentions(t, n.Post(ctx2, sampleEvent(events.SeverityInfo)), "ObjectLevelWorkloadIdentity feature gate is not enabled")
}
