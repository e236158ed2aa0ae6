package eventserver

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

func TestValidateEvent(t *testing.T) {
	valid := events.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "GitRepository", Namespace: "apps", Name: "podinfo"},
		Severity:       events.SeverityInfo,
	}
	tests := []struct {
		name    string
		change  func(*events.Event)
		wantErr bool
	}{
		{name: "valid"},
		{name: "error", change: func(e *events.Event) { e.Severity = events.SeverityError }},
		{name: "trace", change: func(e *events.Event) { e.Severity = events.SeverityTrace }},
		{name: "unknown severity", change: func(e *events.Event) { e.Severity = "warning" }, wantErr: true},
		{name: "no severity", change: func(e *events.Event) { e.Severity = "" }, wantErr: true},
		{name: "no kind", change: func(e *events.Event) { e.InvolvedObject.Kind = "" }, wantErr: true},
		{name: "no name", change: func(e *events.Event) { e.InvolvedObject.Name = "" }, wantErr: true},
		{name: "no namespace", change: func(e *events.Event) { e.InvolvedObject.Namespace = "" }, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := valid
			if tt.change != nil {
				tt.change(&e)
			}
			err := validateEvent(&e)
			if (err != nil) != tt.wantErr {
				t.Fatalf("validateEvent() = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, errInvalidEvent) {
				t.Errorf("error %v is not errInvalidEvent", err)
			}
		})
	}
}

func TestWithAlertMetadata(t *testing.T) {
	tests := []struct {
		name    string
		event   map[string]string
		summary string
		extra   map[string]string
		want    map[string]string
		ignored []string
	}{
		{name: "nothing to add", event: map[string]string{"revision": "r1"}, want: map[string]string{"revision": "r1"}},
		{name: "added", event: map[string]string{"revision": "r1"}, extra: map[string]string{"env": "prod"},
			want: map[string]string{"revision": "r1", "env": "prod"}},
		{name: "event wins", event: map[string]string{"revision": "r1"}, extra: map[string]string{"revision": "r2"},
			want: map[string]string{"revision": "r1"}, ignored: []string{"revision"}},
		{name: "summary", summary: "cluster addons", extra: map[string]string{"env": "prod"},
			want: map[string]string{"summary": "cluster addons", "env": "prod"}},
		{name: "eventMetadata summary wins over spec.summary", summary: "old", extra: map[string]string{"summary": "new"},
			want: map[string]string{"summary": "new"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := events.Event{Metadata: tt.event}
			got, ignored := withAlertMetadata(in, tt.summary, tt.extra)
			if diff := cmp.Diff(tt.want, got.Metadata); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.ignored, ignored); diff != "" {
				t.Errorf("ignored keys (-want +got):\n%s", diff)
			}
			if tt.event != nil && len(tt.extra) > 0 && len(in.Metadata) != len(tt.event) {
				t.Error("the event's own metadata map was modified")
			}
		})
	}
}

func TestRateLimitKey(t *testing.T) {
	base := events.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "GitRepository", Namespace: "apps", Name: "podinfo", UID: "1"},
		Severity:       "info", Reason: "Succeeded", Message: "stored", Metadata: map[string]string{"revision": "r1", "a": "b"},
		Timestamp: time.Unix(1, 0),
	}
	same := base
	same.Timestamp = time.Unix(2, 0)
	same.ReportingInstance = "other-pod"
	same.Metadata = map[string]string{"a": "b", "revision": "r1"}
	if rateLimitKey(&base) != rateLimitKey(&same) {
		t.Error("timestamp, instance or metadata order changed the key")
	}
	for name, change := range map[string]func(*events.Event){
		"name":     func(e *events.Event) { e.InvolvedObject.Name = "other" },
		"severity": func(e *events.Event) { e.Severity = "error" },
		"message":  func(e *events.Event) { e.Message = "other" },
		"revision": func(e *events.Event) { e.Metadata = map[string]string{"revision": "r2", "a": "b"} },
	} {
		e := base
		change(&e)
		if rateLimitKey(&e) == rateLimitKey(&base) {
			t.Errorf("changing the %s kept the key", name)
		}
	}
}

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(time.Minute, func() time.Time { return now })
	steps := []struct {
		advance time.Duration
		key     string
		want    bool
	}{
		{0, "a", true},
		{0, "a", false},
		{0, "b", true},
		{59 * time.Second, "a", false},
		{time.Second, "a", true},
		{0, "a", false},
		{2 * time.Minute, "b", true},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if got := l.allow(s.key); got != s.want {
			t.Errorf("step %d: allow(%q) = %v, want %v", i, s.key, got, s.want)
		}
	}
	l.forget("b")
	if !l.allow("b") {
		t.Error("a forgotten key should be allowed")
	}
	off := newLimiter(0, nil)
	if first, second := off.allow("a"), off.allow("a"); !first || !second {
		t.Error("a zero interval should allow everything")
	}
}

func TestNormalizeMetadata(t *testing.T) {
	tests := []struct {
		name       string
		apiVersion string
		in, want   map[string]string
	}{
		{name: "none", apiVersion: "source.toolkit.fluxcd.io/v1"},
		{name: "bare keys kept", apiVersion: "source.toolkit.fluxcd.io/v1",
			in: map[string]string{"revision": "r1"}, want: map[string]string{"revision": "r1"}},
		{name: "group prefix stripped", apiVersion: "kustomize.toolkit.fluxcd.io/v1",
			in:   map[string]string{"kustomize.toolkit.fluxcd.io/revision": "r1", "other.io/x": "y"},
			want: map[string]string{"revision": "r1", "other.io/x": "y"}},
		{name: "checksum and digest dropped", apiVersion: "source.toolkit.fluxcd.io/v1",
			in:   map[string]string{"source.toolkit.fluxcd.io/checksum": "c", "digest": "d", "revision": "r1"},
			want: map[string]string{"revision": "r1"}},
		{name: "no apiVersion", in: map[string]string{"a/b": "c"}, want: map[string]string{"a/b": "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := events.Event{InvolvedObject: corev1.ObjectReference{APIVersion: tt.apiVersion}, Metadata: tt.in}
			if diff := cmp.Diff(tt.want, normalizeMetadata(&e)); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
}
