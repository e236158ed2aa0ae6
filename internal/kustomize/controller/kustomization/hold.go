package kustomization

import (
	"context"
	"sync"
	"time"

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
	// snapshot is the copy.
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
// nothing), or the write's error.
func (h *held) release() (string, error) {
	h.timer.Stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = true
	return h.version, h.err
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

// release ends p's hold, if one runs: when its timer wrote, the run is
// visible (p.wrote), and obj takes the resourceVersion the write left, so
// that the next patch diffs against it (patch.Helper.PatchCopy). It
// returns the timer's error.
func (r *Reconciler) release(obj *kustomizev1.Kustomization, p *progress) error {
	if p.held == nil {
		return nil
	}
	version, err := p.held.release()
	p.held = nil
	if version != "" {
		obj.SetResourceVersion(version)
		p.wrote = true
	}
	return err
}
