package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const token = "t0ken-s3cret"

func sampleEvent(severity string) events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Kustomization", Name: "apps", Namespace: "flux-system"},
		Severity:       severity, Reason: "HealthCheckFailed", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Message:             "health check failed after 30s: Deployment/apps/web not ready (a_b*c.d!)",
		Metadata:            map[string]string{"revision": "main@sha1:5394cb7f", "summary": "prod-eu"},
		ReportingController: "kustomize-controller",
	}
}

func TestChatRequests(t *testing.T) {
	tests := []struct {
		name     string
		opts     func(base string) notifier.Options
		severity string
		method   string
		path     string
		query    string
		header   map[string]string
	}{
		{name: "msteams", severity: events.SeverityError, method: http.MethodPost, path: "/workflows/abc/triggers/manual/paths/invoke",
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "msteams", Address: base + "/workflows/abc/triggers/manual/paths/invoke"}
			}},
		{name: "googlechat", severity: events.SeverityInfo, method: http.MethodPost, path: "/v1/spaces/AAA/messages",
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "googlechat", Address: base + "/v1/spaces/AAA/messages"}
			}},
		{name: "webex", severity: events.SeverityError, method: http.MethodPost, path: "/v1/messages",
			header: map[string]string{"Authorization": "Bearer " + token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "webex", Address: base + "/v1/messages", Channel: "room-1", Token: token}
			}},
		{name: "telegram", severity: events.SeverityError, method: http.MethodPost, path: "/bot" + token + "/sendMessage",
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "telegram", Address: base, Channel: "-100123", Token: token}
			}},
		{name: "matrix", severity: events.SeverityInfo, method: http.MethodPut,
			path:   "/_matrix/client/v3/rooms/%21room:example.org/send/m.room.message/",
			header: map[string]string{"Authorization": "Bearer " + token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "matrix", Address: base, Channel: "!room:example.org", Token: token}
			}},
		{name: "lark", severity: events.SeverityError, method: http.MethodPost, path: "/open-apis/bot/v2/hook/xyz",
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "lark", Address: base + "/open-apis/bot/v2/hook/xyz"}
			}},
		{name: "zoom", severity: events.SeverityError, method: http.MethodPost, path: "/inbound/hook/AbC",
			query: "format=full", header: map[string]string{"Authorization": token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "zoom", Address: base + "/inbound/hook/AbC", Token: token}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := notifiertest.NewService(t)
			o := tt.opts(svc.Server.URL)
			o.HTTPClient = svc.Server.Client()
			n, err := New(o)
			if err != nil {
				t.Fatalf("New() = %v", err)
			}
			r := notifiertest.PostOnce(t, svc, n, sampleEvent(tt.severity))
			if r.Method != tt.method || !strings.HasPrefix(r.Path, tt.path) {
				t.Errorf("request = %s %s, want %s %s…", r.Method, r.Path, tt.method, tt.path)
			}
			if r.Query != tt.query {
				t.Errorf("query = %q, want %q", r.Query, tt.query)
			}
			for k, v := range tt.header {
				if r.Header.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, r.Header.Get(k), v)
				}
			}
			notifiertest.Golden(t, filepath.Join("testdata", tt.name+".json"), r.Body, svc.Server.URL, *update)

			// A refusal is an error with the answer's status, never the
			// token, though the service quotes the request.
			svc.Answer(http.StatusBadRequest, `{"error":"bad request for `+r.Path+` `+r.Header.Get("Authorization")+`"}`)
			err = n.Post(context.Background(), sampleEvent(tt.severity))
			if err == nil || !strings.Contains(err.Error(), "400") {
				t.Fatalf("refused Post() = %v, want the 400 reported", err)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error shows the token: %v", err)
			}
		})
	}
}

func TestMSTeamsOffice365Connector(t *testing.T) {
	n, err := New(notifier.Options{Type: "msteams", Address: "https://contoso.webhook.office.com/webhookb2/x"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.(*service).payload(n.(*service).opts, sampleEvent(events.SeverityError))
	if err != nil {
		t.Fatal(err)
	}
	card, ok := r.body.(messageCard)
	if !ok || card.Type != "MessageCard" || card.ThemeColor != "FF0000" || card.Summary != "kustomization/apps.flux-system" {
		t.Errorf("body = %#v, want an error MessageCard", r.body)
	}
}

func TestChatNeedsItsFields(t *testing.T) {
	for _, o := range []notifier.Options{
		{Type: "msteams"},
		{Type: "googlechat"},
		{Type: "webex", Token: token},
		{Type: "webex", Channel: "room"},
		{Type: "telegram", Token: token},
		{Type: "telegram", Channel: "1"},
		{Type: "matrix", Address: "https://m", Channel: "!r"},
		{Type: "lark"},
		{Type: "zulip", Channel: "deploys/flux", Username: "bot@z", Password: token},
		{Type: "zulip", Address: "https://z", Channel: "deploys", Username: "bot@z", Password: token},
		{Type: "zulip", Address: "https://z", Channel: "/flux", Username: "bot@z", Password: token},
		{Type: "zulip", Address: "https://z", Channel: "deploys/flux", Password: token},
		{Type: "zulip", Address: "https://z", Channel: "deploys/flux", Username: "bot@z"},
		{Type: "zoom", Address: "https://inbots.zoom.us/incoming/hook/x"},
		{Type: "zoom", Token: token},
		{Type: "slack", Address: "https://x"},
	} {
		if _, err := New(o); !errors.Is(err, notifier.ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", o, err)
		}
	}
}

func TestTelegramEscape(t *testing.T) {
	if got, want := telegramEscape("a_b*c.d!(x)\\"), `a\_b\*c\.d\!\(x\)\\`; got != want {
		t.Errorf("telegramEscape() = %q, want %q", got, want)
	}
}

func TestZulipRequest(t *testing.T) {
	svc := notifiertest.NewService(t)
	n, err := New(notifier.Options{Type: "zulip", Address: svc.Server.URL + "/some/path", Channel: "deploys/flux prod",
		Username: "flux-bot@example.zulipchat.com", Password: token, HTTPClient: svc.Server.Client()})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	if err := n.Post(context.Background(), sampleEvent(events.SeverityError)); err != nil {
		t.Fatalf("Post() = %v", err)
	}
	reqs := svc.Requests()
	if len(reqs) != 1 {
		t.Fatalf("service got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/api/v1/messages" {
		t.Errorf("request = %s %s, want POST /api/v1/messages", r.Method, r.Path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type = %q", ct)
	}
	user, pass, ok := (&http.Request{Header: r.Header}).BasicAuth()
	if !ok || user != "flux-bot@example.zulipchat.com" || pass != token {
		t.Errorf("basic auth = %q, %q, %v", user, pass, ok)
	}
	form, err := url.ParseQuery(string(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	// The form, as JSON, for the golden file.
	fields := map[string]string{}
	for k := range form {
		fields[k] = form.Get(k)
	}
	body, _ := json.Marshal(fields)
	notifiertest.Golden(t, filepath.Join("testdata", "zulip.json"), body, svc.Server.URL, *update)

	svc.Answer(http.StatusUnauthorized, `{"result":"error","msg":"Invalid API key `+token+`"}`)
	err = n.Post(context.Background(), sampleEvent(events.SeverityInfo))
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), token) {
		t.Errorf("refused Post() = %v, want the 401 without the key", err)
	}
}

func TestZoomKeepsAPinnedFormat(t *testing.T) {
	o := notifier.Options{Type: "zoom", Address: "https://inbots.zoom.us/incoming/hook/x?format=fields", Token: token}
	r, err := zoom(o, sampleEvent(events.SeverityInfo))
	if err != nil || r.address != o.Address {
		t.Errorf("address = %q (%v), want %q", r.address, err, o.Address)
	}
}

// TestChatRetries: a chat service having a bad moment gets the message
// once it recovers, through the client the event server builds.
func TestChatRetries(t *testing.T) {
	for _, typ := range []string{"zulip", "zoom", "msteams"} {
		t.Run(typ, func(t *testing.T) {
			svc := notifiertest.NewService(t)
			svc.FailNext(2, http.StatusServiceUnavailable)
			c := notifier.Retrying(svc.Server.Client(), notifier.Retry{Max: 4, WaitMin: time.Millisecond, WaitMax: time.Millisecond})
			n, err := New(notifier.Options{Type: typ, Address: svc.Server.URL + "/hook", Channel: "deploys/flux",
				Username: "bot", Password: token, Token: token, HTTPClient: c})
			if err != nil {
				t.Fatal(err)
			}
			if err := n.Post(context.Background(), sampleEvent(events.SeverityError)); err != nil {
				t.Fatalf("Post() = %v", err)
			}
			reqs := svc.Requests()
			if len(reqs) != 3 || !bytes.Equal(reqs[0].Body, reqs[2].Body) {
				t.Errorf("service got %d requests, want 3 of the same body", len(reqs))
			}
		})
	}
}
