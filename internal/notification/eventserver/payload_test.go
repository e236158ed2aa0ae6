package eventserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

func sampleEvent() events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: "source.toolkit.fluxcd.io/v1", Kind: "GitRepository",
			Namespace: "apps", Name: "podinfo"},
		Severity: events.SeverityError, Reason: "GitOperationFailed", Message: "clone failed",
		Metadata: map[string]string{"revision": "main@sha1:abc", "env": "prod"}, ReportingController: "source-controller",
	}
}

func TestNewSlackPayload(t *testing.T) {
	got := newSlackPayload("general", "weir", sampleEvent())
	want := slackPayload{
		Channel: "general", Username: "weir",
		Attachments: []slackAttachment{{
			Color: "danger", AuthorName: "gitrepository/podinfo.apps", Text: "clone failed", MrkdwnIn: []string{"text"},
			Fields: []slackField{{Title: "env", Value: "prod"}, {Title: "revision", Value: "main@sha1:abc"}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	info := sampleEvent()
	info.Severity, info.Metadata = events.SeverityInfo, nil
	p := newSlackPayload("", "", info)
	if p.Attachments[0].Color != "good" || p.Attachments[0].Fields != nil {
		t.Errorf("info payload = %+v", p.Attachments[0])
	}
	if p.Username != "source-controller" {
		t.Errorf("username = %q, want the reporting controller", p.Username)
	}
	raw, _ := json.Marshal(p)
	var generic map[string]any
	_ = json.Unmarshal(raw, &generic)
	if _, ok := generic["channel"]; ok {
		t.Errorf("empty channel should be omitted: %s", raw)
	}
}

func TestBuildRequest(t *testing.T) {
	tests := []struct {
		name        string
		target      target
		wantURL     string
		wantHeaders map[string]string
		wantErr     error
		check       func(t *testing.T, body []byte)
	}{
		{
			name:    "generic",
			target:  target{kind: "generic", address: "http://h/hook", headers: map[string]string{"X-Team": "a"}},
			wantURL: "http://h/hook", wantHeaders: map[string]string{"X-Team": "a", "Content-Type": "application/json",
				"Gotk-Component": "source-controller"},
			check: func(t *testing.T, body []byte) {
				var e events.Event
				if err := json.Unmarshal(body, &e); err != nil || e.Message != "clone failed" || e.Metadata["env"] != "prod" {
					t.Errorf("body = %s (%v)", body, err)
				}
			},
		},
		{
			name:        "alertmanager with token",
			target:      target{kind: "alertmanager", address: "http://h/api/v2/alerts", token: "t"},
			wantURL:     "http://h/api/v2/alerts",
			wantHeaders: map[string]string{"Authorization": "Bearer t"},
			check: func(t *testing.T, body []byte) {
				var alerts []amAlert
				if err := json.Unmarshal(body, &alerts); err != nil || len(alerts) != 1 {
					t.Errorf("body = %s (%v)", body, err)
				}
			},
		},
		{
			name:    "generic-hmac",
			target:  target{kind: "generic-hmac", address: "http://h/hook", token: "s3cret"},
			wantURL: "http://h/hook",
			check:   nil, // the signature is checked below
		},
		{
			name:    "generic-hmac without token",
			target:  target{kind: "generic-hmac", address: "http://h/hook"},
			wantErr: errors.New("token"),
		},
		{
			name:        "slack with bot token",
			target:      target{kind: "slack", address: "http://h/api/chat.postMessage", token: "xoxb", channel: "general"},
			wantURL:     "http://h/api/chat.postMessage",
			wantHeaders: map[string]string{"Authorization": "Bearer xoxb"},
		},
		{
			name:        "discord",
			target:      target{kind: "discord", address: "http://h/api/webhooks/1/tok/", token: "ignored"},
			wantURL:     "http://h/api/webhooks/1/tok/slack",
			wantHeaders: map[string]string{"Authorization": ""},
		},
		{
			name:    "discord already /slack",
			target:  target{kind: "discord", address: "http://h/api/webhooks/1/tok/slack"},
			wantURL: "http://h/api/webhooks/1/tok/slack",
		},
		{
			name:        "rocket takes slack's payload and no token",
			target:      target{kind: "rocket", address: "http://h/hooks/abc/xyz", token: "ignored"},
			wantURL:     "http://h/hooks/abc/xyz",
			wantHeaders: map[string]string{"Authorization": ""},
		},
		{
			name:    "unsupported",
			target:  target{kind: "github", address: "http://h"},
			wantErr: errUnsupportedType,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := buildRequest(context.Background(), &tt.target, sampleEvent())
			if tt.wantErr != nil {
				if err == nil || (errors.Is(tt.wantErr, errUnsupportedType) && !errors.Is(err, errUnsupportedType)) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tt.wantURL {
				t.Errorf("URL = %s, want %s", req.URL, tt.wantURL)
			}
			for k, v := range tt.wantHeaders {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			body, _ := io.ReadAll(req.Body)
			if tt.target.kind == "generic-hmac" {
				if got, want := req.Header.Get(signatureHeader), sign("s3cret", body); got != want {
					t.Errorf("signature = %q, want %q", got, want)
				}
			}
			if tt.check != nil {
				tt.check(t, body)
			}
		})
	}
}

func TestSign(t *testing.T) {
	// HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog"), a published test vector.
	got := sign("key", []byte("The quick brown fox jumps over the lazy dog"))
	want := "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
	if got != want {
		t.Errorf("sign() = %s, want %s", got, want)
	}
}

func TestNewAlertmanagerAlert(t *testing.T) {
	e := sampleEvent()
	e.Timestamp = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.Metadata["summary"] = "cluster addons"
	want := amAlert{
		Status: "firing",
		Labels: map[string]string{
			"alertname": "FluxGitRepositoryGitOperationFailed", "severity": "error", "reason": "GitOperationFailed",
			"kind": "GitRepository", "name": "podinfo", "namespace": "apps",
			"revision": "main@sha1:abc", "env": "prod",
		},
		Annotations: map[string]string{"message": "clone failed", "summary": "cluster addons"},
		StartsAt:    e.Timestamp,
	}
	if diff := cmp.Diff(want, newAlertmanagerAlert(e)); diff != "" {
		t.Errorf("alert (-want +got):\n%s", diff)
	}
	// Labels the server sets win over metadata keys of the same name.
	e.Metadata["severity"] = "low"
	if got := newAlertmanagerAlert(e).Labels["severity"]; got != "error" {
		t.Errorf("severity label = %q", got)
	}
}

// TestSupportedTypeMatchesNotifiers keeps the early check in the server
// and the notifiers in step.
func TestSupportedTypeMatchesNotifiers(t *testing.T) {
	kinds := []string{"generic", "generic-hmac", "slack", "discord", "alertmanager", "msteams", "rocket",
		"github", "gitlab", "gitea", "bitbucket", "bitbucketserver", "azuredevops", "googlechat", "telegram",
		"pagerduty", "incident.io", "zulip", "zoom", "sentry", "carrier-pigeon", ""}
	for _, kind := range kinds {
		tg := &target{kind: kind, address: "https://h/o/r", token: "u:t", commitStatus: "k"}
		_, err := newNotifier(tg, http.DefaultClient)
		if got, want := supportedType(kind), !errors.Is(err, errUnsupportedType); got != want {
			t.Errorf("supportedType(%q) = %v, but newNotifier error = %v", kind, got, err)
		}
		if kind == "carrier-pigeon" && !errors.Is(err, errUnsupportedType) {
			t.Errorf("newNotifier(%q) = %v, want errUnsupportedType", kind, err)
		}
	}
}
