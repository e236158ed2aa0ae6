package bus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

var testAlert = notifier.AlertRef{Namespace: "flux-system", Name: "traces", UID: "5f0e8a34-1c2b-4d5e-9f60-718293a4b5c6"}

// collector is an OTLP/HTTP traces endpoint on 127.0.0.1 decoding what
// it gets.
type collector struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []*http.Request
	bodies []*coltracepb.ExportTraceServiceRequest
	code   int
	answer string
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{code: http.StatusOK}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Errorf("body is not an ExportTraceServiceRequest: %v", err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.got = append(c.got, r)
		c.bodies = append(c.bodies, &req)
		w.WriteHeader(c.code)
		_, _ = io.WriteString(w, c.answer)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) requests() ([]*http.Request, []*coltracepb.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*http.Request(nil), c.got...), append([]*coltracepb.ExportTraceServiceRequest(nil), c.bodies...)
}

func TestOTelExportsOneSpanPerEvent(t *testing.T) {
	tests := []struct {
		name, golden string
		severity     string
		opts         notifier.Options
		header       map[string]string
		status       tracepb.Status_StatusCode
	}{
		{name: "info with headers and basic auth", golden: "otel-info", severity: events.SeverityInfo,
			opts:   notifier.Options{Username: "flux", Password: password, Headers: map[string]string{"X-Scope-OrgID": "tenant-1"}},
			header: map[string]string{"Authorization": "Basic Zmx1eDpuNHRzLXMzY3JldC1wdw==", "X-Scope-OrgID": "tenant-1"},
			status: tracepb.Status_STATUS_CODE_OK},
		{name: "error with a bearer token", golden: "otel-error", severity: events.SeverityError,
			opts:   notifier.Options{Password: password},
			header: map[string]string{"Authorization": "Bearer " + password},
			status: tracepb.Status_STATUS_CODE_ERROR},
		{name: "the secret's Authorization header wins", golden: "otel-info", severity: events.SeverityInfo,
			opts:   notifier.Options{Password: password, Headers: map[string]string{"Authorization": "ApiKey k"}},
			header: map[string]string{"Authorization": "ApiKey k"},
			status: tracepb.Status_STATUS_CODE_OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startCollector(t)
			o := tt.opts
			o.Type, o.Address, o.Alert, o.HTTPClient = "otel", c.srv.URL+"/v1/traces", testAlert, c.srv.Client()
			n, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			e := sampleEvent(tt.severity)
			start := time.Now()
			if err := n.Post(context.Background(), e); err != nil {
				t.Fatalf("Post() = %v", err)
			}
			t.Logf("exporter, export and shutdown took %s", time.Since(start))
			reqs, bodies := c.requests()
			if len(reqs) != 1 {
				t.Fatalf("collector got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
				t.Errorf("request = %s %s", r.Method, r.URL.Path)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
				t.Errorf("Content-Type = %q", ct)
			}
			for k, v := range tt.header {
				if got := r.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			assertSpan(t, bodies[0], e, tt.status)
			otlpGolden(t, filepath.Join("testdata", tt.golden+".json"), bodies[0])
		})
	}
}

// assertSpan checks the one span of req, field by field.
func assertSpan(t *testing.T, req *coltracepb.ExportTraceServiceRequest, e events.Event, status tracepb.Status_StatusCode) {
	t.Helper()
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 1 ||
		len(req.ResourceSpans[0].ScopeSpans[0].Spans) != 1 {
		t.Fatalf("want one resource, one scope, one span: %v", req)
	}
	rs := req.ResourceSpans[0]
	if got := attrs(rs.Resource.Attributes); !cmp.Equal(got, map[string]string{
		"service.name": "flux-system/traces", "service.namespace": "flux-system", "service.instance.id": testAlert.UID,
	}) {
		t.Errorf("resource attributes = %v", got)
	}
	if rs.SchemaUrl != "https://opentelemetry.io/schemas/1.40.0" {
		t.Errorf("schema URL = %q", rs.SchemaUrl)
	}
	ss := rs.ScopeSpans[0]
	if ss.Scope.Name != "flux:notification-controller" {
		t.Errorf("scope = %q", ss.Scope.Name)
	}
	s := ss.Spans[0]
	if s.Name != "Kustomization: flux-system/apps" {
		t.Errorf("span name = %q", s.Name)
	}
	rev := e.Metadata["revision"]
	wantTrace := sha256.Sum256([]byte(testAlert.UID + ":" + rev))
	wantSpan := sha256.Sum256([]byte(string(e.InvolvedObject.UID) + ":" + rev))
	if !bytes.Equal(s.TraceId, wantTrace[:16]) || !bytes.Equal(s.SpanId, wantSpan[:8]) || len(s.ParentSpanId) != 0 {
		t.Errorf("ids: trace %x span %x parent %x", s.TraceId, s.SpanId, s.ParentSpanId)
	}
	if got := time.Unix(0, int64(s.StartTimeUnixNano)); !got.Equal(e.Timestamp) { //nolint:gosec // test timestamps fit
		t.Errorf("start = %s, want the event's %s", got, e.Timestamp)
	}
	if s.EndTimeUnixNano < s.StartTimeUnixNano {
		t.Errorf("span ends before it starts")
	}
	if got := attrs(s.Attributes); !cmp.Equal(got, map[string]string{
		"object.uid": string(e.InvolvedObject.UID), "object.kind": "Kustomization", "object.name": "apps",
		"object.namespace": "flux-system", "revision": rev, "env": "prod",
	}) {
		t.Errorf("span attributes = %v", got)
	}
	if s.Status.GetCode() != status {
		t.Errorf("status = %v, want %v", s.Status.GetCode(), status)
	}
	if status == tracepb.Status_STATUS_CODE_ERROR && s.Status.GetMessage() != e.Message {
		t.Errorf("status message = %q", s.Status.GetMessage())
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv.Key] = kv.Value.GetStringValue()
	}
	return out
}

// otlpGolden compares req, its end time cleared, as indented JSON.
func otlpGolden(t *testing.T, path string, req *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	req = proto.Clone(req).(*coltracepb.ExportTraceServiceRequest)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				s.EndTimeUnixNano = 0
			}
		}
	}
	b, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	// protojson varies its spacing on purpose: re-encode.
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(v)
	notifiertest.Golden(t, path, b, "http://fake", *update)
}

func TestOTelSkipsHelmRepositories(t *testing.T) {
	c := startCollector(t)
	n, err := New(notifier.Options{Type: "otel", Address: c.srv.URL + "/v1/traces", Alert: testAlert})
	if err != nil {
		t.Fatal(err)
	}
	e := sampleEvent(events.SeverityInfo)
	e.InvolvedObject.Kind = "HelmRepository"
	if err := n.Post(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if reqs, _ := c.requests(); len(reqs) != 0 {
		t.Errorf("collector got %d requests for a HelmRepository event", len(reqs))
	}
}

func TestOTelReportsRefusals(t *testing.T) {
	refusing := startCollector(t)
	refusing.code, refusing.answer = http.StatusUnauthorized, "invalid token Bearer "+password
	keyed := startCollector(t)
	keyed.code, keyed.answer = http.StatusForbidden, "unknown API key "+password
	tests := []struct {
		name, address, want string
		opts                notifier.Options
	}{
		{name: "unauthorized", address: refusing.srv.URL + "/v1/traces", want: "401 Unauthorized",
			opts: notifier.Options{Password: password}},
		{name: "a header's key echoed", address: keyed.srv.URL + "/v1/traces", want: "403 Forbidden",
			opts: notifier.Options{Headers: map[string]string{"X-Honeycomb-Team": password}}},
		{name: "unreachable", address: "http://" + closedPort(t) + "/v1/traces", want: "connection refused",
			opts: notifier.Options{Password: password}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.Type, o.Address, o.Alert = "otel", tt.address, testAlert
			n, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			assertMentions(t, n.Post(ctx, sampleEvent(events.SeverityError)), tt.want)
		})
	}
}

func TestTraceRevision(t *testing.T) {
	tests := []struct {
		name string
		meta map[string]string
		want string
	}{
		{name: "none", want: "unknown"},
		{name: "revision", meta: map[string]string{"revision": "main@sha1:abc"}, want: "main@sha1:abc"},
		{name: "source revision wins", meta: map[string]string{"revision": "r", "source-revision": "main@sha1:def"}, want: "main@sha1:def"},
		{name: "oci artifact", meta: map[string]string{"revision": "r", "app-version": "6.5.0", "oci-digest": "sha256:0a1b"},
			want: "6.5.0@sha256:0a1b"},
		{name: "source revision without revision", meta: map[string]string{"source-revision": "x"}, want: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := traceRevision(events.Event{Metadata: tt.meta}); got != tt.want {
				t.Errorf("traceRevision() = %q, want %q", got, tt.want)
			}
		})
	}
}
