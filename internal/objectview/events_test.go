package objectview

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/internal/testenv"
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
