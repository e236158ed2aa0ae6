package receiver

import (
	"context"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
)

// Event reasons.
const (
	// failedEventReason is Flux's reason for a failed Receiver reconcile.
	failedEventReason = "Failed"
	// succeededEventReason marks a Receiver that became ready or changed path.
	succeededEventReason = "Succeeded"
	// handledEventReason marks a webhook request acted upon.
	handledEventReason = "ReceiverHandled"
)

// recordEvents tells people what changed: a failure, or a Receiver that
// became ready or got a new path. A steady Receiver stays quiet.
func (r *Reconciler) recordEvents(ctx context.Context, obj *notificationv1.Receiver, out *outcome, err error) {
	if r.Events == nil {
		return
	}
	if err != nil {
		r.Events.Warning(ctx, obj, failedEventReason, nil, "%s", err)
		return
	}
	if out.wasReady && out.pathBefore == obj.Status.WebhookPath {
		return
	}
	r.Events.Normal(ctx, obj, succeededEventReason, nil, "Reconciliation finished, next run in %s", obj.GetInterval())
}
