package incident

import (
	"context"
	"encoding/json"
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

const token = "ap1-k3y-s3cret"

func sampleEvent(severity string) events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "HelmRelease", Name: "podinfo", Namespace: "apps",
			UID: "0c9c2e41-d2f9-4f9b-9c41-8d5a4e0b6f3a"},
		Severity: severity, Reason: "UpgradeFailed", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Message:             "Helm upgrade failed: timed out waiting for the condition",
		Metadata:            map[string]string{"revision": "6.5.0", "env": "prod"},
		ReportingController: "helm-controller",
	}
}

func TestIncidentRequests(t *testing.T) {
	tests := []struct {
		name, golden string
		severity     string
		opts         func(base string) notifier.Options
		path         string
		header       map[string]string
	}{
		{name: "pagerduty trigger", golden: "pagerduty-trigger", severity: events.SeverityError, path: "/v2/enqueue",
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "pagerduty", Address: base, Channel: "R0UT1NGK3Y"}
			}},
		{name: "pagerduty resolve", golden: "pagerduty-resolve", severity: events.SeverityInfo, path: "/v2/enqueue",
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "pagerduty", Address: base + "/", Channel: "R0UT1NGK3Y"}
			}},
		{name: "opsgenie", golden: "opsgenie", severity: events.SeverityError, path: "/v2/alerts",
			header: map[string]string{"Authorization": "GenieKey " + token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "opsgenie", Address: base + "/v2/alerts", Token: token}
			}},
		{name: "datadog", golden: "datadog", severity: events.SeverityInfo, path: "/api/v1/events",
			header: map[string]string{"DD-API-KEY": token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "datadog", Address: base, Token: token}
			}},
		{name: "grafana with token", golden: "grafana", severity: events.SeverityError, path: "/api/annotations",
			header: map[string]string{"Authorization": "Bearer " + token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "grafana", Address: base + "/api/annotations", Token: token, Username: "u", Password: "p"}
			}},
		{name: "incident.io firing", golden: "incidentio-firing", severity: events.SeverityError,
			path: "/v2/alert_events/http/01HZX", header: map[string]string{"Authorization": "Bearer " + token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "incident.io", Address: base + "/v2/alert_events/http/01HZX", Token: token}
			}},
		{name: "incident.io resolved", golden: "incidentio-resolved", severity: events.SeverityInfo,
			path: "/v2/alert_events/http/01HZX", header: map[string]string{"Authorization": "Bearer " + token},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "incident.io", Address: base + "/v2/alert_events/http/01HZX", Token: token}
			}},
		{name: "grafana with basic auth", golden: "grafana", severity: events.SeverityError, path: "/api/annotations",
			header: map[string]string{"Authorization": "Basic YWRtaW46" + "YXAxLWszeS1zM2NyZXQ="},
			opts: func(base string) notifier.Options {
				return notifier.Options{Type: "grafana", Address: base + "/api/annotations", Username: "admin", Password: token}
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
			if r.Method != http.MethodPost || r.Path != tt.path {
				t.Errorf("request = %s %s, want POST %s", r.Method, r.Path, tt.path)
			}
			for k, v := range tt.header {
				if r.Header.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, r.Header.Get(k), v)
				}
			}
			notifiertest.Golden(t, filepath.Join("testdata", tt.golden+".json"), r.Body, svc.Server.URL, *update)

			svc.Answer(http.StatusForbidden, `{"message":"keys `+token+` and R0UT1NGK3Y refused"}`)
			err = n.Post(context.Background(), sampleEvent(tt.severity))
			secret := token
			if o.Type == "pagerduty" {
				secret = o.Channel
			}
			if err == nil || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), secret) {
				t.Errorf("refused Post() = %v, want the 403 reported without the key", err)
			}
		})
	}
}

func TestPagerDutyDefaultsAndTruncation(t *testing.T) {
	e := sampleEvent(events.SeverityError)
	e.Message = strings.Repeat("ü", 2000)
	addr, _, body := pagerDuty(notifier.Options{Channel: "k"}, e)
	if addr != "https://events.pagerduty.com/v2/enqueue" {
		t.Errorf("address = %s", addr)
	}
	b, _ := json.Marshal(body)
	var got struct {
		Payload struct {
			Summary string `json:"summary"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(b, &got); err != nil || len([]rune(got.Payload.Summary)) != pagerDutySummaryMax {
		t.Errorf("summary has %d characters, want %d", len([]rune(got.Payload.Summary)), pagerDutySummaryMax)
	}
}

func TestIncidentNeedsItsFields(t *testing.T) {
	for _, o := range []notifier.Options{
		{Type: "pagerduty"},
		{Type: "opsgenie"},
		{Type: "datadog", Token: token},
		{Type: "datadog", Address: "https://api.datadoghq.com"},
		{Type: "grafana"},
		{Type: "incident.io", Token: token},
		{Type: "incident.io", Address: "https://api.incident.io/v2/alert_events/http/01HZX"},
		{Type: "sentry"},
		{Type: "sentry", Address: "https://x"},
		{Type: "nats", Address: "nats://x"},
	} {
		if _, err := New(o); !errors.Is(err, notifier.ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", o, err)
		}
	}
}

func TestIncidentIOSkipsProgressing(t *testing.T) {
	svc := notifiertest.NewService(t)
	n, err := New(notifier.Options{Type: "incident.io", Address: svc.Server.URL, Token: token, HTTPClient: svc.Server.Client()})
	if err != nil {
		t.Fatal(err)
	}
	e := sampleEvent(events.SeverityInfo)
	e.Reason = "Progressing"
	if err := n.Post(context.Background(), e); err != nil || len(svc.Requests()) != 0 {
		t.Errorf("Post(Progressing) = %v after %d requests, want nothing sent", err, len(svc.Requests()))
	}
}
