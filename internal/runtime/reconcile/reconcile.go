// Package reconcile is the skeleton every weir reconciler runs: fetch the
// object, snapshot it, defer the status patch and the metrics, handle
// deletion and the finalizer, honour spec.suspend, run the kind's phases,
// and turn the phases' error into the work queue's reaction (requeue after
// the interval, retry with backoff, or wait for a spec change). A kind
// supplies only what differs, in a Kind (kind.go): its phases as data, its
// declared conditions, its status and events; Run owns the whole ending.
package reconcile

import (
	"math/rand/v2"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
)

// Object is a reconciled kind.
type Object interface {
	client.Object
	meta.ObjectWithConditions
	GetRequeueAfter() time.Duration
}

// Driver holds what the skeleton needs from the reconciler.
type Driver struct {
	Client  client.Client
	Metrics *metrics.Recorder
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	Now    func() time.Time
	// Written and Reader, when both are set, make a run start from the
	// object as the previous run left it, not from a cache that lags
	// behind that run's writes (see Written).
	Written *Written
	Reader  client.Reader
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
