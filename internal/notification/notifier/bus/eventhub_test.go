package bus

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/eventhubfake"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

const (
	sasKeyName = "flux-sender"
	sasKey     = "ZXZlbnQtaHViLXNoYXJlZC1hY2Nlc3Mta2V5LTQy"
	hubJWT     = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2V2ZW50aHVicy5henVyZS5uZXQifQ.c2lnbmF0dXJl"
)

func startEventHub(t *testing.T) *eventhubfake.Server {
	t.Helper()
	return eventhubfake.Start(t, eventhubfake.Credentials{KeyName: sasKeyName, Key: sasKey, JWT: hubJWT,
		Bearers: map[string]string{identityToken: "notify-app"}})
}

// identityToken is what stubIdentity hands out for Event Hubs' scope.
const identityToken = "entra.notify-app.eventhubs"

// stubIdentity is a Provider's cloud identity, recording the scopes asked.
type stubIdentity struct{ scopes *[]string }

func (s stubIdentity) AzureToken(_ context.Context, scope string) (auth.Token, error) {
	*s.scopes = append(*s.scopes, scope)
	return auth.Token{Value: identityToken, ExpiresAt: time.Now().Add(time.Hour)}, nil
}

func (s stubIdentity) GCPToken(context.Context) (auth.Token, error) {
	*s.scopes = append(*s.scopes, "gcp")
	return auth.Token{Value: "ya29.identity", ExpiresAt: time.Now().Add(time.Hour)}, nil
}

// noIdentity refuses every token, as a ServiceAccount behind a closed gate.
type noIdentity struct{}

func (noIdentity) AzureToken(context.Context, string) (auth.Token, error) {
	return auth.Token{}, auth.ErrObjectLevelDisabled
}

func (noIdentity) GCPToken(context.Context) (auth.Token, error) {
	return auth.Token{}, auth.ErrObjectLevelDisabled
}

// TestEventHubWithWorkloadIdentity: without a token, the identity's
// Entra token for Event Hubs is put on $cbs as a JWT; an identity that
// cannot get one fails the delivery naming the cause.
func TestEventHubWithWorkloadIdentity(t *testing.T) {
	s := startEventHub(t)
	var scopes []string
	o := notifier.Options{Address: "flux-events", Channel: s.Addr, ServiceAccountName: "notify",
		Identity: stubIdentity{&scopes}, HTTPClient: trusting(s)}
	if err := postToHub(t, o, sampleEvent(events.SeverityInfo)); err != nil {
		t.Fatal(err)
	}
	want := eventhubfake.PutToken{Type: eventhubfake.TokenTypeJWT, Audience: "amqps://" + s.Addr + "/flux-events",
		Principal: "notify-app", Status: 202}
	if tokens := s.Tokens(); len(tokens) != 1 || tokens[0] != want {
		t.Errorf("put-token = %+v, want [%+v]", tokens, want)
	}
	if len(scopes) != 1 || scopes[0] != "https://eventhubs.azure.net/.default" || len(s.Messages()) != 1 {
		t.Errorf("scopes asked %q, %d messages", scopes, len(s.Messages()))
	}
	o.Identity = noIdentity{}
	err := postToHub(t, o, sampleEvent(events.SeverityInfo))
	assertMentions(t, err, "getting an Entra token for Azure Event Hubs: ObjectLevelWorkloadIdentity feature gate is not enabled")
}

func connectionString(addr, keyName, key string) string {
	return "Endpoint=sb://" + addr + "/;SharedAccessKeyName=" + keyName + ";SharedAccessKey=" + key + ";EntityPath=flux-events"
}

// trusting is the client the event server builds for a Provider whose
// certSecretRef holds the fake's CA.
func trusting(s *eventhubfake.Server) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}
}

func postToHub(t *testing.T, o notifier.Options, e events.Event) error {
	t.Helper()
	o.Type = "azureeventhub"
	n, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return n.Post(ctx, e)
}

func TestEventHubSendsTheEvent(t *testing.T) {
	s := startEventHub(t)
	tests := []struct {
		name  string
		opts  notifier.Options
		token eventhubfake.PutToken
	}{
		{name: "SAS connection string",
			opts: notifier.Options{Address: connectionString(s.Addr, sasKeyName, sasKey)},
			token: eventhubfake.PutToken{Type: eventhubfake.TokenTypeSAS, Audience: "amqps://" + s.Addr + "/flux-events",
				KeyName: sasKeyName, Status: 202}},
		{name: "JWT with namespace and hub",
			opts:  notifier.Options{Address: "flux-events", Channel: s.Addr, Token: hubJWT},
			token: eventhubfake.PutToken{Type: eventhubfake.TokenTypeJWT, Audience: "amqps://" + s.Addr + "/flux-events", Status: 202}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.HTTPClient = trusting(s)
			e := sampleEvent(events.SeverityInfo)
			if err := postToHub(t, tt.opts, e); err != nil {
				t.Fatalf("Post() = %v", err)
			}
			msgs := s.Messages()
			if len(msgs) != i+1 {
				t.Fatalf("hub got %d messages, want %d", len(msgs), i+1)
			}
			m := msgs[i]
			if m.Hub != "flux-events" || len(m.ApplicationProperties) != 0 || m.ContentType != "" {
				t.Errorf("message = hub %q, properties %v, content type %q; want flux-events and none",
					m.Hub, m.ApplicationProperties, m.ContentType)
			}
			assertEventJSON(t, m.Data, e)
			if got := s.Tokens()[i]; got != tt.token {
				t.Errorf("put-token = %+v, want %+v", got, tt.token)
			}
			notifiertest.Golden(t, filepath.Join("testdata", "azureeventhub.json"), m.Data, "http://fake", *update)
		})
	}
}

func TestEventHubReportsRefusals(t *testing.T) {
	s := startEventHub(t)
	closed := closedPort(t)
	tests := []struct {
		name string
		opts notifier.Options
		want string
	}{
		{name: "wrong key", want: "401",
			opts: notifier.Options{Address: connectionString(s.Addr, sasKeyName, password)}},
		{name: "unknown policy", want: "401",
			opts: notifier.Options{Address: connectionString(s.Addr, "reader", sasKey)}},
		{name: "wrong JWT", want: "401", opts: notifier.Options{Address: "flux-events", Channel: s.Addr, Token: password}},
		{name: "unreachable", want: "flux-events",
			opts: notifier.Options{Address: connectionString(closed, sasKeyName, password)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.HTTPClient = trusting(s)
			err := postToHub(t, tt.opts, sampleEvent(events.SeverityError))
			assertMentions(t, err, tt.want)
		})
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("hub got %d messages from refused senders", n)
	}
}

func TestNewChecksTheEventHubProvider(t *testing.T) {
	tests := []struct {
		name string
		opts notifier.Options
		want string
	}{
		{name: "nothing", opts: notifier.Options{}, want: "needs an address"},
		{name: "hub name without token nor identity", opts: notifier.Options{Address: "flux-events"},
			want: "or a cloud identity to get one"},
		{name: "identity without namespace", opts: notifier.Options{Address: "flux-events", Identity: noIdentity{}},
			want: "channel (the Event Hubs namespace)"},
		{name: "service account and token", want: "serviceAccountName and jwt token authentication cannot be set at the same time",
			opts: notifier.Options{Address: "flux-events", Channel: "ns", Token: password, ServiceAccountName: "notify"}},
		{name: "service account and SAS", want: "serviceAccountName and SAS authentication cannot be set at the same time",
			opts: notifier.Options{Address: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=" + password + ";EntityPath=flux",
				ServiceAccountName: "notify"}},
		{name: "token and SAS", want: "jwt token and SAS authentication cannot be set at the same time",
			opts: notifier.Options{Address: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=" + password + ";EntityPath=flux",
				Token: "jwt"}},
		{name: "token without namespace", opts: notifier.Options{Address: "flux-events", Token: password},
			want: "channel (the Event Hubs namespace)"},
		{name: "connection string without hub", want: "no EntityPath",
			opts: notifier.Options{Address: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=" + password}},
		{name: "connection string without key", want: "not a valid connection string",
			opts: notifier.Options{Address: "Endpoint=sb://ns.servicebus.windows.net/;EntityPath=" + password}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Type = "azureeventhub"
			_, err := New(tt.opts)
			if !strings.Contains(err.Error(), "invalid provider") {
				t.Errorf("New() = %v, want ErrInvalidConfig", err)
			}
			assertMentions(t, err, tt.want)
		})
	}
}

func TestFullyQualified(t *testing.T) {
	for in, want := range map[string]string{
		"fluxv2":                             "fluxv2.servicebus.windows.net",
		"fluxv2.servicebus.windows.net":      "fluxv2.servicebus.windows.net",
		"fluxv2.servicebus.chinacloudapi.cn": "fluxv2.servicebus.chinacloudapi.cn",
		"127.0.0.1:5671":                     "127.0.0.1:5671",
	} {
		if got := fullyQualified(in); got != want {
			t.Errorf("fullyQualified(%q) = %q, want %q", in, got, want)
		}
	}
}

// assertEventJSON checks data is e as Flux's controllers send it, field
// by field.
func assertEventJSON(t *testing.T, data []byte, e events.Event) {
	t.Helper()
	var got events.Event
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("message is not an event: %s", data)
	}
	if got.InvolvedObject.Kind != "Kustomization" || got.InvolvedObject.Name != "apps" ||
		got.InvolvedObject.Namespace != "flux-system" || got.InvolvedObject.UID != e.InvolvedObject.UID {
		t.Errorf("involvedObject = %+v", got.InvolvedObject)
	}
	if got.Severity != e.Severity || got.Reason != e.Reason || got.Message != e.Message || !got.Timestamp.Equal(e.Timestamp) {
		t.Errorf("event = %+v", got)
	}
	if got.Metadata["revision"] != e.Metadata["revision"] || got.Metadata["env"] != "prod" {
		t.Errorf("metadata = %v", got.Metadata)
	}
	if got.ReportingController != "kustomize-controller" || got.ReportingInstance != e.ReportingInstance {
		t.Errorf("reporting = %q, %q", got.ReportingController, got.ReportingInstance)
	}
}
