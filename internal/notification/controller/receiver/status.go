package receiver

import (
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// readyMessagePrefix starts Flux's Ready message; the path follows.
const readyMessagePrefix = "Receiver initialized for path: "

// applyStatus computes the status from what the phases observed (out) and
// how they ended (err). It reads nothing else, so it is tested without an
// API server.
func applyStatus(obj *notificationv1.Receiver, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if err != nil {
		reason := errs.Reason(err, meta.FailedReason)
		if errs.IsStalling(err) {
			// The spec cannot be served: no path is published, so the
			// server answers 404 rather than acting on it.
			obj.Status.WebhookPath = ""
			conditions.MarkStalled(obj, reason, "%s", err)
			return
		}
		// The token could not be read: the path stays as it was, and the
		// server refuses requests while Ready is False.
		conditions.MarkFailed(obj, reason, "%s", err)
		return
	}
	obj.Status.WebhookPath = out.webhookPath
	conditions.MarkReady(obj, meta.SucceededReason, "%s%s", readyMessagePrefix, out.webhookPath)
}

func isReady(obj *notificationv1.Receiver) bool {
	c := conditions.Get(obj, meta.ReadyCondition)
	return c != nil && c.Status == "True"
}
