package cli_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// fakeController stands in for a controller on one object until the test
// ends: whenever react returns a status for the object's current state, it
// writes it (see writeStatus). Tests use it where the real controller does
// not exist yet or would make the output depend on timing.
func fakeController(t *testing.T, k kinds.Kind, ns, name string, react func(u *unstructured.Unstructured) map[string]any) {
	t.Helper()
	env := testenv.Get(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			u := k.New()
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err == nil {
				if status := react(u); status != nil {
					writeStatusNoFail(ctx, env.Client, u, status)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
}

// writeStatusNoFail is writeStatus for a goroutine: errors (conflicts) are
// left to the next round.
func writeStatusNoFail(ctx context.Context, c client.Client, u *unstructured.Unstructured, status map[string]any) {
	s := deepCopyMap(status)
	if _, ok := s["observedGeneration"]; !ok {
		s["observedGeneration"] = u.GetGeneration()
	}
	if conds, ok := s["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				if _, set := m["observedGeneration"]; !set {
					m["observedGeneration"] = u.GetGeneration()
				}
			}
		}
	}
	u.Object["status"] = s
	_ = c.Status().Update(ctx, u)
}

// readyCondition is a Ready=True condition with message msg.
func readyCondition(reason, msg string) []any {
	return []any{map[string]any{
		"type": "Ready", "status": "True", "reason": reason, "message": msg,
		"lastTransitionTime": "2026-11-01T10:00:00Z",
	}}
}

func failedCondition(reason, msg string) []any {
	return []any{map[string]any{
		"type": "Ready", "status": "False", "reason": reason, "message": msg,
		"lastTransitionTime": "2026-11-01T10:00:00Z",
	}}
}
