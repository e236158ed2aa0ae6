// Package reconcile is the skeleton every weir reconciler runs: fetch the
// object, snapshot it, defer the status patch and the metrics, handle
// deletion and the finalizer, honour spec.suspend, run the kind's phases,
// and turn the phases' error into the work queue's reaction (requeue after
// the interval, retry with backoff, or wait for a spec change). A kind
// supplies only what differs, in Hooks.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/patch"
)

// Object is a reconciled kind.
type Object interface {
	client.Object
	meta.ObjectWithConditions
	GetRequeueAfter() time.Duration
}

// Hooks are what one kind adds to the skeleton.
type Hooks[T Object] struct {
	// Kind labels the metrics.
	Kind string
	// Suspended reports spec.suspend.
	Suspended func(T) bool
	// Finalize cleans up before the finalizer is released; it must remove
	// the finalizer itself when done.
	Finalize func(context.Context, T) error
	// Reconcile runs the phases, writes the status into the object and
	// records events; the error it returns decides the requeue.
	Reconcile func(context.Context, T) error
	// RequeueAfter, when set, replaces the object's GetRequeueAfter after a
	// successful reconcile: an ImageRepository whose scan is not due yet
	// comes back when it is, not a whole interval later.
	RequeueAfter func(T) time.Duration
}

// Driver holds what the skeleton needs from the reconciler.
type Driver struct {
	Client  client.Client
	Metrics *metrics.Recorder
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	Now    func() time.Time
}

// RunHooks is the skeleton's first half only: the kind's Reconcile writes
// status and events itself. Deprecated: kinds move to Run with a Kind.
func RunHooks[T Object](ctx context.Context, d Driver, req ctrl.Request, obj T, h Hooks[T]) (result ctrl.Result, retErr error) {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	if err := d.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	helper := patch.NewHelper(obj, d.Client)
	defer func() {
		if err := helper.Patch(ctx, obj); err != nil {
			retErr = errors.Join(retErr, err)
		}
		if d.Metrics != nil {
			d.Metrics.RecordDuration(h.Kind, obj.GetNamespace(), obj.GetName(), start)
		}
	}()

	ctx = withPatcher(ctx, helper)

	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, h.Finalize(ctx, obj)
	}
	// The finalizer is stored before anything is fetched, stored or
	// applied: an object deleted while its first reconcile runs can no
	// longer gain one, and what that reconcile made would be left behind.
	if controllerutil.AddFinalizer(obj, meta.Finalizer) {
		if err := helper.Patch(ctx, obj); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	if h.Suspended(obj) {
		ctrl.LoggerFrom(ctx).V(1).Info("reconciliation is suspended")
		return ctrl.Result{}, nil
	}
	err := h.Reconcile(ctx, obj)
	interval := obj.GetRequeueAfter()
	if h.RequeueAfter != nil {
		interval = h.RequeueAfter(obj)
	}
	return Result(interval, d.Jitter, err)
}

// Result turns a phase error into the queue's reaction: success requeues
// after the interval (with jitter), a stall waits for a spec change, a wait
// requeues after its delay, a failure with a fixed retry delay requeues after
// it, anything else retries with backoff.
func Result(interval time.Duration, jitter float64, err error) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{RequeueAfter: Jitter(interval, jitter)}, nil
	}
	if errs.IsStalling(err) {
		return ctrl.Result{}, nil
	}
	if w, ok := errs.AsWaiting(err); ok {
		return ctrl.Result{RequeueAfter: w.RequeueAfter}, nil
	}
	if p, ok := errs.AsInProgress(err); ok {
		return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
	}
	if d := errs.RetryAfter(err); d > 0 {
		return ctrl.Result{RequeueAfter: d}, nil
	}
	return ctrl.Result{}, err
}

// Jitter spreads d by up to ±percent %.
func Jitter(d time.Duration, percent float64) time.Duration {
	if percent <= 0 {
		return d
	}
	spread := float64(d) * percent / 100
	return d + time.Duration((rand.Float64()*2-1)*spread) //nolint:gosec // jitter needs no crypto
}
