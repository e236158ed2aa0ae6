package commitstatus

import (
	"errors"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

const (
	sha1Hex   = "5394cb7f48332b2de7c17dd8b8384bbc84b7e738"
	sha256Hex = "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"
	digest    = "2bfc5bcd6c2e4b1ee4e1d4b8b4e0d2e2a7e3c3b7b9c6b1b0b1b2b3b4b5b6b7b8"
)

func TestCommit(t *testing.T) {
	tests := []struct {
		name    string
		md      map[string]string
		want    string
		wantErr bool
	}{
		{name: "branch", md: map[string]string{"revision": "main@sha1:" + sha1Hex}, want: sha1Hex},
		{name: "detached", md: map[string]string{"revision": "sha1:" + sha1Hex}, want: sha1Hex},
		{name: "tag", md: map[string]string{"revision": "v1.2.3@sha1:" + sha1Hex}, want: sha1Hex},
		{name: "ref with @ in it", md: map[string]string{"revision": "refs/heads/a@b@sha1:" + sha1Hex}, want: sha1Hex},
		{name: "sha256 repository", md: map[string]string{"revision": "main@sha256:" + sha256Hex}, want: sha256Hex},
		{name: "legacy", md: map[string]string{"revision": "main/" + sha1Hex}, want: sha1Hex},
		{name: "bare upper case", md: map[string]string{"revision": strings.ToUpper(sha1Hex)}, want: sha1Hex},
		{name: "OCI digest with origin revision",
			md:   map[string]string{"revision": "latest@sha256:" + digest, "originRevision": "main@sha1:" + sha1Hex},
			want: sha1Hex},
		{name: "RFC-0008 commit wins",
			md:   map[string]string{"revision": "main@sha1:" + strings.Repeat("a", 40), "event.toolkit.fluxcd.io/commit": sha1Hex},
			want: sha1Hex},
		{name: "no revision", md: map[string]string{"summary": "x"}, wantErr: true},
		{name: "chart version", md: map[string]string{"revision": "6.5.0"}, wantErr: true},
		{name: "short hash", md: map[string]string{"revision": "main@sha1:abc"}, wantErr: true},
		{name: "unknown algorithm", md: map[string]string{"revision": "main@md5:" + sha1Hex}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Commit(events.Event{Metadata: tt.md})
			if tt.wantErr {
				if !errors.Is(err, ErrNoCommit) {
					t.Fatalf("Commit() = %q, %v; want ErrNoCommit", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Commit() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDescription(t *testing.T) {
	tests := map[string]string{
		"ReconciliationSucceeded": "reconciliation succeeded",
		"HealthCheckFailed":       "health check failed",
		"DependencyNotReady":      "dependency not ready",
		"HTTPError":               "http error",
		"Upgrade2Failed":          "upgrade2 failed",
		"":                        "",
		strings.Repeat("Ab", 100): strings.Repeat("ab ", 47)[:140],
		"Ünïcode\xff":             "ünïcode\uFFFD",
	}
	for reason, want := range tests {
		if got := Description(events.Event{Reason: reason}); got != want {
			t.Errorf("Description(%q) = %q, want %q", reason, got, want)
		}
	}
}

func TestDefaultKey(t *testing.T) {
	got := DefaultKey("Kustomization", "PodInfo", "0c9c2e41-d2f9-4f9b-9c41-8d5a4e0b6f3a")
	if want := "kustomization/podinfo/0c9c2e41"; got != want {
		t.Errorf("DefaultKey() = %q, want %q", got, want)
	}
}

func TestWants(t *testing.T) {
	tests := []struct {
		name string
		e    events.Event
		want bool
	}{
		{name: "reconciliation finished", e: events.Event{Severity: "info", Metadata: map[string]string{"commit_status": "update"}}, want: true},
		{name: "error", e: events.Event{Severity: "error", Reason: "BuildFailed"}, want: true},
		{name: "RFC-0008 commit", e: events.Event{Severity: "info", Metadata: map[string]string{"event.toolkit.fluxcd.io/commit": sha1Hex}}, want: true},
		{name: "other info", e: events.Event{Severity: "info", Reason: "NewArtifact"}, want: false},
		{name: "progressing", e: events.Event{Severity: "info", Reason: "Progressing", Metadata: map[string]string{"commit_status": "update"}}, want: false},
	}
	for _, tt := range tests {
		if got := Wants(tt.e); got != tt.want {
			t.Errorf("%s: Wants() = %v", tt.name, got)
		}
	}
}
