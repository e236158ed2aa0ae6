package chat

import (
	"context"
	"errors"
	"flag"
	"net/http"
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
