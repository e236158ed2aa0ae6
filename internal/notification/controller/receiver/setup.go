package receiver

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// WebhookPathIndex is the field index on Receivers holding
// status.webhookPath; the Server finds the Receiver of a request with it.
const WebhookPathIndex = ".status.webhookPath"

// SetupWithManager registers the webhook path index, which the Server
// needs from the same manager's cache, and the reconciler. Only spec
// changes (generation) and reconcile requests (annotation) trigger a
// reconcile; a rotated token is picked up at the next interval or request,
// as in Flux.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts reconcile.SetupOptions) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &notificationv1.Receiver{}, WebhookPathIndex, indexWebhookPath); err != nil {
		return fmt.Errorf("indexing Receivers by webhook path: %w", err)
	}
	return reconcile.Setup(mgr, &notificationv1.Receiver{}, r, opts)
}

func indexWebhookPath(o client.Object) []string {
	if p := o.(*notificationv1.Receiver).Status.WebhookPath; p != "" {
		return []string{p}
	}
	return nil
}
