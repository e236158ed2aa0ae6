package kustomization

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// progressAfter is how long every run holds a progress phase back: a
// phase that the next one, or the run's end, replaces sooner is never
// written; one still running then is written at that moment, by a timer
// (docs/design/0043-coalesced-progress-writes.md).
const progressAfter = time.Second

// held is a progress phase held back: a copy of the object as the phase
// left it, which a timer writes if the phase outlasts its hold. The
// reconcile goroutine releases it before anything else writes the status
// and before the run's final status; the mutex orders the timer's write
// and the release, so the release learns for sure whether the copy was
// written, and nothing is written after it.
type held struct {
	timer *time.Timer

	mu       sync.Mutex
	released bool
	// version is the resourceVersion the timer's write left, empty when
	// it did not write; err is its failure.
	version string
	err     error
	// snapshot is the copy; once written, the object as stored.
	snapshot *kustomizev1.Kustomization
}

// holdProgress holds obj's status, as it is now, back for d: then a timer
// writes a copy of it through the patch helper in ctx, unless released
// first. The write runs on after the phase's deadline, which the release
// waits for: it is the write the phase would have made when it began.
func holdProgress(ctx context.Context, obj *kustomizev1.Kustomization, d time.Duration) *held {
	h := &held{snapshot: obj.DeepCopy()}
	ctx = context.WithoutCancel(ctx)
	h.timer = time.AfterFunc(d, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.released {
			return
		}
		h.released = true
		h.version, h.err = reconcile.PatchCopy(ctx, h.snapshot)
	})
	return h
}

// release ends the hold: the timer writes nothing from now on. It
// reports the resourceVersion the timer's write left (empty when it wrote
// nothing) and the conditions it wrote, or the write's error.
func (h *held) release() (string, []metav1.Condition, error) {
	h.timer.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = true
	return h.version, h.snapshot.Status.Conditions, h.err
}

// progressHold is how long r holds a phase of obj back: progressAfter
// unless a test sets another.
func (r *Reconciler) progressHold(obj *kustomizev1.Kustomization) time.Duration {
	if r.holdFor != nil {
		if d := r.holdFor(obj); d > 0 {
			return d
		}
	}
	return progressAfter
}

// holdPhase holds the phase obj now reports back until p.until, or writes
// it at once when that time has passed.
func (r *Reconciler) holdPhase(ctx context.Context, obj *kustomizev1.Kustomization, p *progress) error {
	d := p.until.Sub(r.now())
	if d <= 0 {
		return r.write(ctx, obj, p)
	}
	p.held = holdProgress(ctx, obj, d)
	return nil
}

// release ends p's hold, if one runs: when its timer wrote, the run is
// visible (p.wrote), what it wrote is what the status shows (p.shown), and
// obj takes the resourceVersion it left, so that the next patch diffs
// against the write (patch.Helper.PatchCopy). It reports whether a phase
// was held and not written, and the timer's error.
func (r *Reconciler) release(obj *kustomizev1.Kustomization, p *progress) (pending bool, err error) {
	if p.held == nil {
		return false, nil
	}
	version, written, err := p.held.release()
	p.held = nil
	if version == "" {
		return err == nil, err
	}
	obj.SetResourceVersion(version)
	p.wrote = true
	p.shown = written
	return false, nil
}

// write patches the status as the phases left it so far, progress and
// all: from then on the run is visible and ends with a status of its own.
func (r *Reconciler) write(ctx context.Context, obj *kustomizev1.Kustomization, p *progress) error {
	p.wrote = true
	if err := reconcile.Patch(ctx, obj); err != nil {
		return err
	}
	p.shown = cloneConditions(obj.Status.Conditions)
	return nil
}

func cloneConditions(c []metav1.Condition) []metav1.Condition {
	if c == nil {
		return nil
	}
	out := make([]metav1.Condition, len(c))
	copy(out, c)
	return out
}
