package kustomization

import (
	"context"
	"time"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// What spec.timeout bounds, in one place.
//
// spec.timeout bounds the work a run does for one revision: fetching the
// artifact, building, applying, pruning and the health checks. The
// deadline is set once, by withDeadline, when that work begins: the
// source lookup and the dependency gate before it only decide whether to
// begin, as in Flux. Everything after reads the deadline from the
// context (deadlineOf): a health check that parks keeps it, so a wake
// never starts a new timeout, and the health check's own wait is what
// is left of it. Deleting a Kustomization with deletionPolicy
// WaitForTermination is a run of its own: its wait for the deleted
// objects is bounded by withDeadline too. The skeleton's own
// Kind.Timeout stays unset for this kind: it would start the deadline
// before the dependency gate.

// timeoutOf is spec.timeout, or when unset the interval less 30s, never
// under 30s (GetTimeout): the one read of it in this package, shared by
// the deadlines below and the progress messages ("… with a timeout of
// 5m0s").
func timeoutOf(obj *kustomizev1.Kustomization) time.Duration {
	return obj.GetTimeout()
}

// withDeadline bounds ctx by spec.timeout from now.
func withDeadline(ctx context.Context, obj *kustomizev1.Kustomization) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, timeoutOf(obj))
}

// deadlineOf returns when the work of ctx must end: the deadline
// withDeadline set, or spec.timeout from now for a ctx without one (a
// phase called on its own) or with a later one.
func deadlineOf(ctx context.Context, obj *kustomizev1.Kustomization, now time.Time) time.Time {
	limit := now.Add(timeoutOf(obj))
	if d, ok := ctx.Deadline(); ok && d.Before(limit) {
		return d
	}
	return limit
}
