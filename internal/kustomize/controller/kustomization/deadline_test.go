package kustomization

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// TestDeadlineOf: the work after withDeadline ends at its deadline, never
// later than spec.timeout from now; a context without one gets
// spec.timeout from now.
func TestDeadlineOf(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	obj := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Timeout: &metav1.Duration{Duration: 2 * time.Minute}}}
	for _, tt := range []struct {
		name     string
		deadline time.Time // zero: none
		want     time.Time
	}{
		{"no deadline: spec.timeout from now", time.Time{}, now.Add(2 * time.Minute)},
		{"the run's deadline, sooner", now.Add(30 * time.Second), now.Add(30 * time.Second)},
		{"never later than spec.timeout from now", now.Add(time.Hour), now.Add(2 * time.Minute)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if !tt.deadline.IsZero() {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, tt.deadline)
				defer cancel()
			}
			if got := deadlineOf(ctx, obj, now); !got.Equal(tt.want) {
				t.Errorf("deadlineOf = %s, want %s", got, tt.want)
			}
		})
	}
}
