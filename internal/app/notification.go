package app

import (
	"context"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/internal/controller/alert"
	"github.com/weir-gitops/weir/internal/controller/receiver"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// notificationConcurrency is Flux's notification-controller --concurrent
// default.
const notificationConcurrency = 4

// setupNotification runs the Receiver reconciler, the webhook server
// (unless --receiverAddr is "0") and the events server that forwards the
// controllers' events to the Providers of matching Alerts (unless
// --events-listen-addr is "0").
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
	if err != nil {
		return err
	}
	if err := addEventsServer(deps); err != nil {
		return err
	}
	if opts.ReceiverAddr == "0" {
		return nil
	}
	srv := receiver.NewServer(opts.ReceiverAddr, mgr.GetClient(), ctrl.Log.WithName("receiver"), opts.NoCrossNamespaceRefs)
	// Token Secrets are read uncached: no cluster-wide Secret informer.
	srv.SecretReader = mgr.GetAPIReader()
	srv.Events = r.Events
	return mgr.Add(srv)
}

// addEventsServer starts the server Alerts are served from.
func addEventsServer(deps *Deps) error {
	opts, mgr := deps.Options, deps.Manager
	addr := opts.EventsListenAddr
	switch {
	case addr == "0":
		return nil
	case addr == "" && deps.runs("source"):
		addr = ":9091"
	case addr == "":
		addr = ":9090"
	}
	if deps.runs("source") && addr == opts.StorageAddr {
		return fmt.Errorf("--events-listen-addr %s is also the artifact server's --storage-addr", addr)
	}
	return mgr.Add(alert.NewServer(addr, mgr.GetClient(), ctrl.Log.WithName("events"), alert.Options{
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs,
		RateLimitInterval:    opts.RateLimitInterval,
		SecretReader:         mgr.GetAPIReader(),
	}))
}
