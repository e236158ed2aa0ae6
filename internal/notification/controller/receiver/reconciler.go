package receiver

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// ControllerName is the name Flux's Receivers are reconciled under: the
// event source and field manager people see.
const ControllerName = meta.NotificationControllerManager

// Reconciler reconciles Receivers: it reads the token, publishes the
// webhook path in status and reports what keeps a Receiver from working.
// The hooks themselves are served by Server.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets uncached; Client when nil.
	APIReader client.Reader
	// Events may be nil: no events are recorded then.
	Events *events.Recorder
	// Metrics may be nil.
	Metrics *metrics.Recorder
	// NoCrossNamespaceRefs is --no-cross-namespace-refs: a Receiver naming
	// resources in another namespace is stalled.
	NoCrossNamespaceRefs bool
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := reconcile.Driver{Client: r.Client, Metrics: r.Metrics, Jitter: r.Jitter, Now: r.Now}
	return reconcile.Run(ctx, d, req, &notificationv1.Receiver{}, r.kind())
}

// kind is the Receiver as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*notificationv1.Receiver, *outcome] {
	return reconcile.Kind[*notificationv1.Receiver, *outcome]{
		Name:       notificationv1.ReceiverKind,
		Conditions: reconcile.Conditions{Owned: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}},
		Suspended:  func(obj *notificationv1.Receiver) bool { return obj.Spec.Suspend },
		Finalize:   finalize,
		Begin: func(_ context.Context, obj *notificationv1.Receiver) *outcome {
			return &outcome{pathBefore: obj.Status.WebhookPath, wasReady: isReady(obj)}
		},
		Phases: []reconcile.Phase[*notificationv1.Receiver, *outcome]{r.reconcile},
		Status: applyStatus,
		Events: r.recordEvents,
	}
}

// outcome is what the phases observed; applyStatus turns it into status.
type outcome struct {
	// pathBefore and wasReady are the webhook path and readiness the run
	// began with, for the events.
	pathBefore string
	wasReady   bool
	// webhookPath is the path computed from the current token, when read.
	webhookPath string
}

// reconcile checks the spec, then reads the token and derives the path.
func (r *Reconciler) reconcile(ctx context.Context, obj *notificationv1.Receiver, out *outcome) error {
	if err := checkSpec(obj, r.NoCrossNamespaceRefs); err != nil {
		return err
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	token, _, err := readSecret(ctx, reader, obj)
	if err != nil {
		return &errs.Generic{Err: err, Reason: notificationv1.TokenNotFoundReason}
	}
	out.webhookPath = obj.GetWebhookPath(token)
	return nil
}

// finalize releases the finalizer: a Receiver owns nothing outside itself.
func finalize(_ context.Context, obj *notificationv1.Receiver) error {
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	return nil
}
