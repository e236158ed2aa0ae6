package incident

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

const sentryKey = "5ebc1ae7cafe4d2b"

// envelope is a Sentry envelope split into its lines: the header, the
// item's header, the item.
type envelope struct {
	header, itemHeader, item map[string]any
}

func parseEnvelope(t *testing.T, body []byte) envelope {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	if len(lines) != 3 {
		t.Fatalf("envelope has %d lines, want 3 (header, item header, item):\n%s", len(lines), body)
	}
	var env envelope
	for i, into := range []*map[string]any{&env.header, &env.itemHeader, &env.item} {
		if err := json.Unmarshal(lines[i], into); err != nil {
			t.Fatalf("envelope line %d: %v", i+1, err)
		}
	}
	return env
}

// stable drops what changes from run to run: IDs, the SDK's own
// description and the host's (a transaction's server is the host name).
func stable(item map[string]any) []byte {
	for _, k := range []string{"event_id", "release", "sdk", "modules", "user"} {
		delete(item, k)
	}
	if item["type"] == "transaction" {
		delete(item, "server_name")
	}
	if ctx, ok := item["contexts"].(map[string]any); ok {
		for _, k := range []string{"device", "os", "runtime"} {
			delete(ctx, k)
		}
		if tr, ok := ctx["trace"].(map[string]any); ok {
			delete(tr, "trace_id")
			delete(tr, "span_id")
		}
	}
	if spans, ok := item["spans"].([]any); ok {
		for _, s := range spans {
			delete(s.(map[string]any), "trace_id")
			delete(s.(map[string]any), "span_id")
		}
	}
	b, _ := json.Marshal(item)
	return b
}

func TestSentryEnvelopes(t *testing.T) {
	tests := []struct {
		severity, itemType, golden string
	}{
		{severity: events.SeverityError, itemType: "event", golden: "sentry-error"},
		{severity: events.SeverityInfo, itemType: "transaction", golden: "sentry-transaction"},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			svc := notifiertest.NewService(t)
			dsn := strings.Replace(svc.Server.URL, "http://", "http://"+sentryKey+"@", 1) + "/42"
			n, err := New(notifier.Options{Type: "sentry", Address: dsn, Channel: "production", HTTPClient: svc.Server.Client()})
			if err != nil {
				t.Fatalf("New() = %v", err)
			}
			if err := n.Post(context.Background(), sampleEvent(tt.severity)); err != nil {
				t.Fatalf("Post() = %v", err)
			}
			reqs := svc.Requests()
			if len(reqs) != 1 {
				t.Fatalf("Sentry got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != "/api/42/envelope/" {
				t.Errorf("request = %s %s, want POST /api/42/envelope/", r.Method, r.Path)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/x-sentry-envelope" {
				t.Errorf("Content-Type = %q", ct)
			}
			if auth := r.Header.Get("X-Sentry-Auth"); !strings.Contains(auth, "sentry_key="+sentryKey) ||
				!strings.HasPrefix(auth, "Sentry sentry_version=7") {
				t.Errorf("X-Sentry-Auth = %q", auth)
			}
			env := parseEnvelope(t, r.Body)
			if env.itemHeader["type"] != tt.itemType {
				t.Errorf("item type = %v, want %s", env.itemHeader["type"], tt.itemType)
			}
			if env.header["event_id"] != env.item["event_id"] || env.header["event_id"] == "" {
				t.Errorf("envelope and item disagree on the event ID: %v, %v", env.header["event_id"], env.item["event_id"])
			}
			notifiertest.Golden(t, filepath.Join("testdata", tt.golden+".json"), stable(env.item), svc.Server.URL, *update)
		})
	}
}

func TestSentryRefusalAndSilence(t *testing.T) {
	svc := notifiertest.NewService(t)
	dsn := strings.Replace(svc.Server.URL, "http://", "http://"+sentryKey+"@", 1) + "/42"
	n, err := New(notifier.Options{Type: "sentry", Address: dsn, HTTPClient: svc.Server.Client()})
	if err != nil {
		t.Fatal(err)
	}
	svc.Answer(http.StatusForbidden, `{"detail":"project key `+sentryKey+` disabled"}`)
	err = n.Post(context.Background(), sampleEvent(events.SeverityError))
	if err == nil || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), sentryKey) {
		t.Errorf("refused Post() = %v, want the 403 without the key", err)
	}
	// Trace events are not Sentry's business.
	before := len(svc.Requests())
	if err := n.Post(context.Background(), sampleEvent(events.SeverityTrace)); err != nil || len(svc.Requests()) != before {
		t.Errorf("Post(trace) = %v, want nothing sent", err)
	}
}
