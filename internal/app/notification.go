package app

import (
	"context"
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/internal/notification/controller/receiver"
	"github.com/weir-gitops/weir/internal/notification/eventserver"
	"github.com/weir-gitops/weir/internal/notification/secretcache"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// notificationConcurrency is Flux's notification-controller --concurrent
// default.
const notificationConcurrency = 4

// setupNotification runs the Receiver reconciler, the webhook server
// (unless --receiverAddr is "0") and the events server that forwards the
// controllers' events to the Providers of matching Alerts (unless its
// address, see eventsListenAddr, is "0").
func setupNotification(ctx context.Context, deps *Deps) error {
	opts, mgr := deps.Options, deps.Manager
	concurrency := opts.Concurrent
	if concurrency == 0 {
		concurrency = notificationConcurrency
	}
	r := &receiver.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Events: events.NewRecorder(mgr.GetEventRecorderFor(receiver.ControllerName), mgr.GetScheme(), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
			receiver.ControllerName, os.Getenv("POD_NAME"), eventsWebhook(opts, deps.Selected)),
		Metrics:              deps.Metrics,
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs,
		Jitter:               opts.IntervalJitter,
	}
	err := r.SetupWithManager(ctx, mgr, reconcile.SetupOptions{
		Shard:                   deps.sharder(),
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
	addr, err := eventsListenAddr(opts, deps.Selected)
	if err != nil || addr == "0" {
		return err
	}
	if deps.runs("source") && addr == opts.StorageAddr {
		return fmt.Errorf("--events-listen-addr %s is also the artifact server's --storage-addr", addr)
	}
	// Delivery failures become Warning Events on the Alert, Kubernetes
	// Events only: forwarding them to this very server would be a loop.
	recorder := events.NewRecorder(mgr.GetEventRecorderFor(receiver.ControllerName), mgr.GetScheme(), //nolint:staticcheck // SA1019: as for the Receiver reconciler's recorder
		receiver.ControllerName, os.Getenv("POD_NAME"), "")
	secrets, err := providerSecrets(deps)
	if err != nil {
		return err
	}
	return mgr.Add(eventserver.NewServer(addr, mgr.GetClient(), ctrl.Log.WithName("events"), eventserver.Options{
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs,
		RateLimitInterval:    opts.RateLimitInterval,
		SecretReader:         secrets,
		Events:               recorder,
		Auth:                 deps.authSettings(opts.DefaultServiceAccount),
	}))
}

// providerSecrets is the event server's Secret reader: the API reader
// behind a cache kept current by a metadata-only watch of the Secrets the
// manager may see (docs/design/0033).
func providerSecrets(deps *Deps) (*secretcache.Cache, error) {
	mgr := deps.Manager
	ns := ""
	if !deps.Options.WatchAllNamespaces {
		ns = os.Getenv("RUNTIME_NAMESPACE")
	}
	c, err := secretcache.New(mgr.GetConfig(), mgr.GetAPIReader(), ns)
	if err != nil {
		return nil, fmt.Errorf("creating the event server's Secret cache: %w", err)
	}
	return c, mgr.Add(c)
}

// notificationAlone reports whether this process runs the notification
// controller and nothing else: Flux's notification-controller Deployment.
// --events-addr then means what it means to Flux's notification-controller,
// the address events are taken on; to every other controller it is the URL
// they are sent to.
func notificationAlone(selected []string) bool {
	return len(selected) == 1 && selected[0] == "notification"
}

// eventsListenAddr is where the notification controller takes events:
// --events-listen-addr when set; else, running alone, --events-addr
// (Flux's notification-controller flag, default :9090); else, beside other
// controllers, :9090, or :9091 when the source controller's artifact
// server has 9090. In that layout --events-addr stays the URL the other
// controllers send to (in one process it names this very server).
func eventsListenAddr(opts *Options, selected []string) (string, error) {
	switch {
	case opts.EventsListenAddr != "":
		return opts.EventsListenAddr, nil
	case notificationAlone(selected) && strings.Contains(opts.EventsAddr, "://"):
		return "", fmt.Errorf("--events-addr=%s: the notification controller, run alone as Flux's notification-controller, "+
			"listens on --events-addr (host:port, default :9090), it does not send to it", opts.EventsAddr)
	case notificationAlone(selected) && opts.EventsAddr != "":
		return opts.EventsAddr, nil
	case contains(selected, "source"):
		return ":9091", nil
	default:
		return ":9090", nil
	}
}

// eventsWebhook is the URL this process's controllers send events to:
// --events-addr, except where it is the notification controller's listen
// address (its own events are then Kubernetes Events only).
func eventsWebhook(opts *Options, selected []string) string {
	if notificationAlone(selected) {
		return ""
	}
	return opts.EventsAddr
}
