package bus

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const password = "n4ts-s3cret-pw"

func sampleEvent(severity string) events.Event {
	return events.Event{
		InvolvedObject: corev1.ObjectReference{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization",
			Name: "apps", Namespace: "flux-system", UID: "7d0cdc51-ddcf-4743-b223-83ca5c699632"},
		Severity: severity, Reason: "ReconciliationSucceeded", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Message:             "Applied revision: main@sha1:731f7eaddfb6af01cb2173e18f0f75b0ba780ef1",
		Metadata:            map[string]string{"revision": "main@sha1:731f7eaddfb6af01cb2173e18f0f75b0ba780ef1", "env": "prod"},
		ReportingController: "kustomize-controller", ReportingInstance: "kustomize-controller-7c7b47f5f-8bhrp",
	}
}

func TestNewChecksTheProvider(t *testing.T) {
	tests := []struct {
		name string
		opts notifier.Options
		want string
	}{
		{name: "nats without address", opts: notifier.Options{Type: "nats", Channel: "flux"}, want: "address"},
		{name: "nats without subject", opts: notifier.Options{Type: "nats", Address: "nats://127.0.0.1:4222"}, want: "channel"},
		{name: "pubsub without project", opts: notifier.Options{Type: "googlepubsub", Channel: "t"}, want: "project ID"},
		{name: "pubsub without topic", opts: notifier.Options{Type: "googlepubsub", Address: "p"}, want: "topic ID"},
		{name: "pubsub token not JSON", opts: notifier.Options{Type: "googlepubsub", Address: "p", Channel: "t",
			Token: "not-json-" + password}, want: "not JSON credentials"},
		{name: "pubsub token of unknown type", opts: notifier.Options{Type: "googlepubsub", Address: "p", Channel: "t",
			Token: `{"type":"api_key","key":"` + password + `"}`}, want: `type "api_key"`},
		{name: "otel without address", opts: notifier.Options{Type: "otel", Alert: notifier.AlertRef{UID: "u"}}, want: "address"},
		{name: "otel without alert", opts: notifier.Options{Type: "otel", Address: "http://127.0.0.1:4318/v1/traces"}, want: "Alert"},
		{name: "not a bus", opts: notifier.Options{Type: "slack"}, want: "not an event-bus type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(emulatorHostEnv, "")
			_, err := New(tt.opts)
			if !errors.Is(err, notifier.ErrInvalidConfig) {
				t.Fatalf("New() = %v, want ErrInvalidConfig", err)
			}
			assertMentions(t, err, tt.want)
		})
	}
}

// assertMentions fails unless err says want and never the password.
func assertMentions(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want one saying %q", want)
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if !strings.Contains(msg, want) {
		t.Errorf("error %q does not say %q", msg, want)
	}
	if strings.Contains(msg, password) {
		t.Errorf("error %q leaks the password", msg)
	}
}
