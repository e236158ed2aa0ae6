package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/patch"
)

// Kind is what one kind brings to the skeleton: its name, its phases, the
// conditions it owns, how the phases' record becomes status, and what it
// tells people. Everything else of the lifecycle is Run's: reading the
// object, the finalizer, suspend, the deadline, clearing the negative
// conditions after a success, the status patch, the metrics and the
// queue's reaction.
//
// O is the kind's record of one run (a pointer to a struct): what the
// phases observed and what they share, the scope struct of
// source-controller and cluster-api.
type Kind[T Object, O any] struct {
	// Name labels the metrics: the kind, as Flux's gotk_reconcile_duration
	// labels it.
	Name string
	// Conditions are the condition types the kind writes.
	Conditions Conditions
	// Suspended reports spec.suspend.
	Suspended func(T) bool
	// Finalizer is the finalizer the kind keeps on its objects;
	// meta.Finalizer when empty (source-watcher's kinds have their own).
	Finalizer string
	// Finalize cleans up before the finalizer is released; it must remove
	// the finalizer itself when done. Nil releases it at once.
	Finalize func(context.Context, T) error
	// Begin returns the record the phases fill for this run, with what of
	// the object before the run its status and events compare against
	// (was it Ready, which revision did it hold). Nil starts from the zero
	// O, which must then be usable as it is.
	Begin func(context.Context, T) O
	// Timeout, when set, bounds the phases: Run derives the one deadline
	// of the run from it (spec.timeout for the kinds that have one).
	Timeout func(T) time.Duration
	// Phases run in order on the record; the first error ends the run, and
	// Stop ends it early as a success.
	Phases []Phase[T, O]
	// Status writes the status from the record and the run's error. It
	// reads nothing else and writes nothing else, so it is tested without
	// an API server. Run then removes Conditions.Negative after a success.
	Status func(obj T, out O, err error)
	// Events tells people what happened, after Status; nil records none.
	Events func(ctx context.Context, obj T, out O, err error)
	// RequeueAfter, when set, replaces the object's GetRequeueAfter after a
	// successful reconcile: an ImageRepository whose scan is not due yet
	// comes back when it is, not a whole interval later.
	RequeueAfter func(T, O) time.Duration
}

// Phase is one step of a reconcile: it reads the object and the record,
// does its work and writes what it observed into the record.
type Phase[T Object, O any] func(ctx context.Context, obj T, out O) error

// Conditions declares the condition types a kind writes.
type Conditions struct {
	// Owned are all the types the kind writes, Ready included, in the
	// order kstatus and the flux CLI read them.
	Owned []string
	// Negative are the "abnormal-true" types (FetchFailed, Stalled,
	// ArtifactOutdated…): True while something is wrong. A successful run
	// removes them, so a kind's Status only marks them on a failure.
	Negative []string
}

// Stop ends a run's phases early, as a success: the stored artifact is
// already the one upstream points at, nothing is left to do.
var Stop = errors.New("nothing left to do") //nolint:revive,staticcheck // a sentinel, not an error a person reads

// Run reconciles the object req names with the kind's phases, using obj as
// the empty value to read it into.
func Run[T Object, O any](ctx context.Context, d Driver, req ctrl.Request, obj T, k Kind[T, O]) (result ctrl.Result, retErr error) {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	if err := d.Client.Get(OwnRead(ctx), req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			d.Written.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := d.Written.fresh(ctx, d.Reader, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			d.Written.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	helper := patch.NewHelper(obj, d.Client)
	defer func() {
		if err := helper.Patch(ctx, obj); err != nil {
			retErr = errors.Join(retErr, err)
		} else {
			d.Written.left(req.NamespacedName, obj)
		}
		if d.Metrics != nil {
			d.Metrics.RecordDuration(k.Name, obj.GetNamespace(), obj.GetName(), start)
		}
	}()
	ctx = withPatcher(ctx, helper)

	if !obj.GetDeletionTimestamp().IsZero() {
		if k.Finalize == nil {
			controllerutil.RemoveFinalizer(obj, k.finalizer())
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, k.Finalize(ctx, obj)
	}
	// The finalizer is stored before anything is fetched, stored or
	// applied: an object deleted while its first reconcile runs can no
	// longer gain one, and what that reconcile made would be left behind.
	if controllerutil.AddFinalizer(obj, k.finalizer()) {
		if err := helper.Patch(ctx, obj); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	if k.Suspended != nil && k.Suspended(obj) {
		ctrl.LoggerFrom(ctx).V(1).Info("reconciliation is suspended")
		return ctrl.Result{}, nil
	}
	out, err := k.run(ctx, obj)
	k.end(ctx, obj, out, err)
	interval := obj.GetRequeueAfter()
	if k.RequeueAfter != nil && err == nil {
		interval = k.RequeueAfter(obj, out)
	}
	return Result(interval, d.Jitter, err)
}

func (k Kind[T, O]) finalizer() string {
	if k.Finalizer != "" {
		return k.Finalizer
	}
	return meta.Finalizer
}

// run runs the phases under the run's one deadline.
func (k Kind[T, O]) run(ctx context.Context, obj T) (O, error) {
	var out O
	if k.Begin != nil {
		out = k.Begin(ctx, obj)
	}
	if k.Timeout != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, k.Timeout(obj))
		defer cancel()
	}
	for _, phase := range k.Phases {
		if err := phase(ctx, obj, out); err != nil {
			if errors.Is(err, Stop) {
				return out, nil
			}
			return out, err
		}
	}
	return out, nil
}

// end is the one ending of every run: the status, then the events.
func (k Kind[T, O]) end(ctx context.Context, obj T, out O, err error) {
	k.WriteStatus(obj, out, err)
	if k.Events != nil {
		k.Events(ctx, obj, out, err)
	}
}

// WriteStatus is the status a run ends with: the kind's Status from the
// record, then, after a success, no negative condition left. It touches
// nothing but obj, so a kind's status is tested through it without an API
// server.
func (k Kind[T, O]) WriteStatus(obj T, out O, err error) {
	if k.Status != nil {
		k.Status(obj, out, err)
	}
	if err == nil {
		for _, c := range k.Conditions.Negative {
			conditions.Delete(obj, c)
		}
	}
}
