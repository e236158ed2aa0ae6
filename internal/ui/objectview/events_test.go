package objectview

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestEvents lists the core/v1 Events of one Kustomization, newest first,
// and none of another object's.
func TestEvents(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	base := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	event := func(name, kind, object, reason string, first, last time.Duration, count int32) *corev1.Event {
		return &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			InvolvedObject: corev1.ObjectReference{
				APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: kind, Namespace: ns, Name: object,
			},
			Type: corev1.EventTypeNormal, Reason: reason, Message: reason + " of " + object, Count: count,
			FirstTimestamp: metav1.NewTime(base.Add(first)), LastTimestamp: metav1.NewTime(base.Add(last)),
			Source: corev1.EventSource{Component: "kustomize-controller"},
		}
	}
	env.Create(t,
		event("a", "Kustomization", "apps", "ReconciliationSucceeded", 0, time.Minute, 3),
		event("b", "Kustomization", "apps", "Progressing", 2*time.Minute, 2*time.Minute, 1),
		event("c", "Kustomization", "apps", "BuildFailed", -time.Hour, -time.Hour, 1),
		event("d", "Kustomization", "infra", "ReconciliationSucceeded", 3*time.Minute, 3*time.Minute, 1),
		event("e", "GitRepository", "apps", "NewArtifact", 4*time.Minute, 4*time.Minute, 1),
	)
	got, err := Events(context.Background(), env.Client, Ref{Kind: "Kustomization", Namespace: ns, Name: "apps"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Type: "Normal", Reason: "Progressing", Message: "Progressing of apps", Count: 1,
			FirstTime: "2026-01-01T10:02:00Z", LastTime: "2026-01-01T10:02:00Z", Source: "kustomize-controller"},
		{Type: "Normal", Reason: "ReconciliationSucceeded", Message: "ReconciliationSucceeded of apps", Count: 3,
			FirstTime: "2026-01-01T10:00:00Z", LastTime: "2026-01-01T10:01:00Z", Source: "kustomize-controller"},
		{Type: "Normal", Reason: "BuildFailed", Message: "BuildFailed of apps", Count: 1,
			FirstTime: "2026-01-01T09:00:00Z", LastTime: "2026-01-01T09:00:00Z", Source: "kustomize-controller"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}
}

// TestEventOf converts the shapes Events come in: legacy timestamps,
// events.k8s.io's eventTime and series, only a creation time; the
// reporter from source.component, else reportingController.
func TestEventOf(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 10, m, 0, 0, time.UTC) }
	tests := []struct {
		name string
		ev   corev1.Event
		want Event
	}{
		{"legacy", corev1.Event{Type: "Normal", Reason: "A", Message: "m", Count: 3,
			FirstTimestamp: metav1.NewTime(at(1)), LastTimestamp: metav1.NewTime(at(2)),
			Source: corev1.EventSource{Component: "kustomize-controller"}, ReportingController: "other"},
			Event{Type: "Normal", Reason: "A", Message: "m", Count: 3, FirstTime: "2026-01-01T10:01:00Z",
				LastTime: "2026-01-01T10:02:00Z", Source: "kustomize-controller"}},
		{"series", corev1.Event{Type: "Warning", Reason: "B", EventTime: metav1.NewMicroTime(at(3)),
			Series: &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(at(5))}, ReportingController: "weir-ui"},
			Event{Type: "Warning", Reason: "B", Count: 1, FirstTime: "2026-01-01T10:03:00Z",
				LastTime: "2026-01-01T10:05:00Z", Source: "weir-ui"}},
		{"created only", corev1.Event{Reason: "C", ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(7))}},
			Event{Reason: "C", Count: 1, FirstTime: "2026-01-01T10:07:00Z", LastTime: "2026-01-01T10:07:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, EventOf(&tt.ev)); diff != "" {
				t.Errorf("EventOf (-want +got):\n%s", diff)
			}
		})
	}
}
