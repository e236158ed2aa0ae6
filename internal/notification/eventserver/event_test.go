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

func TestMergedMetadata(t *testing.T) {
	tests := []struct {
		name      string
		md        eventMetadata
		summary   string
		extra     map[string]string
		want      map[string]string
		conflicts map[string]string
	}{
		{name: "nothing", want: nil},
		{name: "controller only", md: eventMetadata{controller: map[string]string{"revision": "r1"}},
			want: map[string]string{"revision": "r1"}},
		{name: "added", md: eventMetadata{controller: map[string]string{"revision": "r1"}}, extra: map[string]string{"env": "prod"},
			want: map[string]string{"revision": "r1", "env": "prod"}},
		{name: "controller wins over eventMetadata", md: eventMetadata{controller: map[string]string{"revision": "r1"}},
			extra: map[string]string{"revision": "r2"}, want: map[string]string{"revision": "r1"},
			conflicts: map[string]string{"revision": "Alert object .spec.eventMetadata, involved object controller metadata"}},
		{name: "eventMetadata wins over annotations", md: eventMetadata{annotations: map[string]string{"env": "dev", "team": "a"}},
			extra: map[string]string{"env": "prod"}, want: map[string]string{"env": "prod", "team": "a"},
			conflicts: map[string]string{"env": "involved object annotations, Alert object .spec.eventMetadata"}},
		{name: "spec.summary wins over eventMetadata summary", summary: "old", extra: map[string]string{"summary": "new"},
			want:      map[string]string{"summary": "old"},
			conflicts: map[string]string{"summary": "Alert object .spec.eventMetadata, Alert object .spec.summary"}},
		{name: "controller wins over summary", summary: "s", md: eventMetadata{controller: map[string]string{"summary": "c"}},
			want:      map[string]string{"summary": "c"},
			conflicts: map[string]string{"summary": "Alert object .spec.summary, involved object controller metadata"}},
		{name: "three sources", md: eventMetadata{annotations: map[string]string{"env": "a"}, controller: map[string]string{"env": "c"}},
			extra: map[string]string{"env": "b"}, want: map[string]string{"env": "c"},
			conflicts: map[string]string{"env": "involved object annotations, Alert object .spec.eventMetadata, involved object controller metadata"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, conflicts := tt.md.merged(tt.summary, tt.extra)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.conflicts, conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRateLimitKey(t *testing.T) {
	base := events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: "source.toolkit.fluxcd.io/v1", Kind: "GitRepository", Namespace: "apps", Name: "podinfo", UID: "1"},
		Severity:       "info", Reason: "Succeeded", Message: "stored",
		Metadata:  map[string]string{"revision": "r1", "a": "b"},
		Timestamp: time.Unix(1, 0),
	}
	key := func(e events.Event) string { return rateLimitKey(&e, splitMetadata(&e)) }
	for name, change := range map[string]func(*events.Event){
		"timestamp": func(e *events.Event) { e.Timestamp = time.Unix(2, 0) },
		"instance":  func(e *events.Event) { e.ReportingInstance = "other-pod" },
		"other metadata": func(e *events.Event) {
			e.Metadata = map[string]string{"revision": "r1", "a": "c", "commit_status": "update"}
		},
		"annotations": func(e *events.Event) {
			e.Metadata = map[string]string{"revision": "r1", "event.toolkit.fluxcd.io/revision": "x"}
		},
		"prefixed form":        func(e *events.Event) { e.Metadata = map[string]string{"source.toolkit.fluxcd.io/revision": "r1"} },
		"uid (Flux's key too)": func(e *events.Event) { e.InvolvedObject.UID = "2" },
	} {
		e := base
		change(&e)
		if key(e) != key(base) {
			t.Errorf("changing the %s changed the key", name)
		}
	}
	for name, change := range map[string]func(*events.Event){
		"name":           func(e *events.Event) { e.InvolvedObject.Name = "other" },
		"severity":       func(e *events.Event) { e.Severity = "error" },
		"reason":         func(e *events.Event) { e.Reason = "Failed" },
		"message":        func(e *events.Event) { e.Message = "other" },
		"revision":       func(e *events.Event) { e.Metadata = map[string]string{"revision": "r2"} },
		"originRevision": func(e *events.Event) { e.Metadata = map[string]string{"revision": "r1", "originRevision": "o"} },
		"token": func(e *events.Event) {
			e.Metadata = map[string]string{"revision": "r1", "source.toolkit.fluxcd.io/token": "t"}
		},
	} {
		e := base
		change(&e)
		if key(e) == key(base) {
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

func TestSplitMetadata(t *testing.T) {
	const ks = "kustomize.toolkit.fluxcd.io/v1"
	tests := []struct {
		name        string
		apiVersion  string
		in          map[string]string
		controller  map[string]string
		annotations map[string]string
		update      bool
	}{
		{name: "none", apiVersion: ks},
		{name: "bare keys are weir's controller keys", apiVersion: ks,
			in: map[string]string{"revision": "r1"}, controller: map[string]string{"revision": "r1"}},
		{name: "group prefix stripped, other groups dropped", apiVersion: ks,
			in:         map[string]string{"kustomize.toolkit.fluxcd.io/revision": "r1", "other.io/x": "y", "source.toolkit.fluxcd.io/a": "b"},
			controller: map[string]string{"revision": "r1"}},
		{name: "event group prefix stripped into annotations", apiVersion: ks,
			in:          map[string]string{"event.toolkit.fluxcd.io/env": "prod", "event.toolkit.fluxcd.io/": "empty", "kustomize.toolkit.fluxcd.io/env": "c"},
			controller:  map[string]string{"env": "c"},
			annotations: map[string]string{"env": "prod"}},
		{name: "checksum and digest dropped in any case, the annotations' kept", apiVersion: "source.toolkit.fluxcd.io/v1",
			in:          map[string]string{"source.toolkit.fluxcd.io/Checksum": "c", "digest": "d", "revision": "r1", "event.toolkit.fluxcd.io/digest": "a"},
			controller:  map[string]string{"revision": "r1"},
			annotations: map[string]string{"digest": "a"}},
		{name: "prefixed key wins over its bare twin", apiVersion: ks,
			in: map[string]string{"revision": "bare", "kustomize.toolkit.fluxcd.io/revision": "prefixed"}, controller: map[string]string{"revision": "prefixed"}},
		{name: "commit status update, prefixed", apiVersion: ks,
			in: map[string]string{"kustomize.toolkit.fluxcd.io/commit_status": "update"}, controller: map[string]string{"commit_status": "update"}, update: true},
		{name: "commit status update, bare", apiVersion: ks,
			in: map[string]string{"commit_status": "update"}, controller: map[string]string{"commit_status": "update"}, update: true},
		{name: "commit status of another value", apiVersion: ks,
			in: map[string]string{"commit_status": "Update"}, controller: map[string]string{"commit_status": "Update"}},
		{name: "commit status as an annotation is not Flux's mark", apiVersion: ks,
			in: map[string]string{"event.toolkit.fluxcd.io/commit_status": "update"}, controller: map[string]string{},
			annotations: map[string]string{"commit_status": "update"}},
		{name: "commit status under another group", apiVersion: ks,
			in: map[string]string{"source.toolkit.fluxcd.io/commit_status": "update"}, controller: map[string]string{}},
		{name: "no apiVersion: prefixed keys dropped", in: map[string]string{"a/b": "c", "d": "e"}, controller: map[string]string{"d": "e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := events.Event{InvolvedObject: corev1.ObjectReference{APIVersion: tt.apiVersion}, Metadata: tt.in}
			md := splitMetadata(&e)
			if diff := cmp.Diff(tt.controller, md.controller); diff != "" {
				t.Errorf("controller keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.annotations, md.annotations); diff != "" {
				t.Errorf("annotation keys (-want +got):\n%s", diff)
			}
			if got := md.commitStatusUpdate(); got != tt.update {
				t.Errorf("commitStatusUpdate() = %v, want %v", got, tt.update)
			}
		})
	}
}

func TestInternalMetadataDropped(t *testing.T) {
	e := events.Event{InvolvedObject: corev1.ObjectReference{APIVersion: "source.toolkit.fluxcd.io/v1"},
		Metadata: map[string]string{"source.toolkit.fluxcd.io/token": "t", "revision": "r1", "event.toolkit.fluxcd.io/token": "a"}}
	md := splitMetadata(&e)
	got, _ := md.withoutInternal().merged("", nil)
	if diff := cmp.Diff(map[string]string{"revision": "r1", "token": "a"}, got); diff != "" {
		t.Errorf("forwarded metadata (-want +got):\n%s", diff)
	}
	if md.controller["token"] != "t" {
		t.Error("withoutInternal changed the metadata it was called on")
	}
}
