package app

import (
	"context"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/internal/controller/receiver"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// notificationConcurrency is Flux's notification-controller --concurrent
// default.
const notificationConcurrency = 4

// setupNotification runs the Receiver reconciler and, unless
// --receiverAddr is "0", the webhook server. Alerts and Providers (event
// forwarding) are not part of weir yet.
func setupNotification(ctx context.Context, deps *Deps) error {
	opts, mgr := deps.Options, deps.Manager
	concurrency := opts.Concurrent
	if concurrency == 0 {
		concurrency = notificationConcurrency
	}
	r := &receiver.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Events: events.NewRecorder(mgr.GetEventRecorderFor(receiver.ControllerName), mgr.GetScheme(),
			receiver.ControllerName, os.Getenv("POD_NAME"), opts.EventsAddr),
		Metrics:              deps.Metrics,
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs,
		Jitter:               opts.IntervalJitter,
	}
	err := r.SetupWithManager(ctx, mgr, reconcile.SetupOptions{
		MaxConcurrentReconciles: concurrency,
		MinRetryDelay:           opts.MinRetryDelay,
		MaxRetryDelay:           opts.MaxRetryDelay,
	})
	if err != nil || opts.ReceiverAddr == "0" {
		return err
	}
	srv := receiver.NewServer(opts.ReceiverAddr, mgr.GetClient(), ctrl.Log.WithName("receiver"), opts.NoCrossNamespaceRefs)
	// Token Secrets are read uncached: no cluster-wide Secret informer.
	srv.SecretReader = mgr.GetAPIReader()
	srv.Events = r.Events
	return mgr.Add(srv)
}
