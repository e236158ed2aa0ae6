package parked

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/apply/health"
	"github.com/weir-gitops/weir/internal/apply/healthwatch"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// For is what a wait was parked for: the owner's generation, the revision
// it applied and its reconcile request token. Any of them changing ends
// the wait, and the owner's next run applies again.
type For struct {
	Generation int64
	Revision   string
	Token      string
}

// Spec is what Park starts a wait from.
type Spec[C any] struct {
	// Owner is the object that waits; the watches queue it.
	Owner types.NamespacedName
	For   For
	// Objects are the objects to wait for.
	Objects []ssa.ObjMetadata
	// Checks judge them; nil judges every object by kstatus. A kind with
	// an expression of its own is read whole from the API server.
	Checks *health.Checks
	// Deadline ends the wait with a timeout.
	Deadline time.Time
	// Watchable says the controller's own watches may follow the objects:
	// not when the owner applies as another account (the controller would
	// read what that account may not) or to another cluster.
	Watchable bool
	// Applied is the change set of the apply that wrote them, nil when
	// there was none: the first look judges what it wrote by its answers.
	Applied *ssa.ChangeSet
	// Carry is what the owner keeps from the apply to the end of the wait.
	Carry C
}

// Wait is a parked health check. It lives in memory: a restarted
// controller applies again and waits anew.
type Wait[C any] struct {
	owner     types.NamespacedName
	parkedFor For
	health    *ssa.Health
	checks    *health.Checks
	tracked   bool // the watches follow what it waits for
	watched   bool // every kind it waits for is watched: no polling
	// cacheable: the controller's own watches may serve it (Watchable);
	// written are the objects its apply wrote (created or configured),
	// which the cache may not show yet: in the run that applied them
	// (fresh) they are judged by the apply's answers (applied) or read
	// from the API server (writtenReader), and whenever the watches do not
	// follow the wait they are read from the API server and the others
	// through the cache.
	cacheable bool
	fresh     bool
	written   map[ssa.ObjMetadata]ssa.Action
	applied   *ssa.ChangeSet // while fresh
	start     time.Time
	deadline  time.Time
	carry     C
}

// Start is when the wait began: the apply's end.
func (w *Wait[C]) Start() time.Time { return w.start }

// Carry is what the owner parked with the wait (Spec.Carry).
func (w *Wait[C]) Carry() C { return w.carry }

// Verdict is what one look at a wait decided. A wait that passed or
// failed is over (dropped); one in progress stays parked.
type Verdict struct {
	// Passed: every object is Current. Took is how long since the wait
	// began.
	Passed bool
	Took   time.Duration
	// Err is the failure, in Flux's words: failed early (fail-fast), or
	// timed out naming what is still pending.
	Err error
	// After, while in progress, is when to look again at the latest: the
	// deadline, or sooner when some kind is polled.
	After time.Duration
}

// InProgress reports whether the wait goes on.
func (v Verdict) InProgress() bool { return !v.Passed && v.Err == nil }

// Waits holds one controller's parked waits by owner. Its configuration
// is set before first use; Waits is safe for concurrent use by the
// controller's workers, each of which judges only the wait of the owner
// it reconciles.
type Waits[C any] struct {
	// Watcher follows the objects through watches; nil polls them.
	Watcher *healthwatch.Watcher
	// PollInterval is how often a wait the watches do not fully follow
	// looks again; ssa.DefaultPollInterval when zero.
	PollInterval time.Duration
	// FailFast ends a wait as soon as an object is Failed.
	FailFast bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu    sync.Mutex
	waits map[types.NamespacedName]*Wait[C]
}

func (p *Waits[C]) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Park starts a wait.
func (p *Waits[C]) Park(s Spec[C]) *Wait[C] {
	w := &Wait[C]{
		owner: s.Owner, parkedFor: s.For, health: ssa.NewHealth(s.Objects), checks: s.Checks,
		start: p.now(), deadline: s.Deadline, carry: s.Carry,
		cacheable: p.Watcher != nil && s.Watchable, fresh: true, written: writtenBy(s.Applied), applied: s.Applied,
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waits == nil {
		p.waits = map[types.NamespacedName]*Wait[C]{}
	}
	p.waits[s.Owner] = w
	return w
}

// Find returns owner's wait if it still holds for f; one that no longer
// holds is dropped.
func (p *Waits[C]) Find(owner types.NamespacedName, f For) *Wait[C] {
	p.mu.Lock()
	w := p.waits[owner]
	p.mu.Unlock()
	if w == nil {
		return nil
	}
	if w.parkedFor != f {
		p.Drop(owner)
		return nil
	}
	return w
}

// Drop ends owner's wait, if it has one, and its watches.
func (p *Waits[C]) Drop(owner types.NamespacedName) {
	p.mu.Lock()
	delete(p.waits, owner)
	p.mu.Unlock()
	if p.Watcher != nil {
		p.Watcher.Untrack(owner)
	}
}

// Judge looks at a wait's objects once, through mgr and kube (the
// client the owner applies with), and decides: passed, failed, or still
// in progress. A wait that passed or failed is dropped.
func (p *Waits[C]) Judge(ctx context.Context, mgr *ssa.Manager, kube client.Reader, w *Wait[C]) Verdict {
	p.look(ctx, mgr, kube, w)
	if !w.health.Done() && !w.tracked {
		p.track(ctx, w)
		if w.watched {
			// A change made before the watch knew of this wait is in the
			// cache now, one made after it queues the owner: look once
			// more so that none is lost in between.
			p.look(ctx, mgr, kube, w)
		}
	}
	// Any later look follows a watch event or a deadline: the cache has
	// seen this run's writes by then.
	w.fresh, w.applied = false, nil
	now := p.now()
	switch {
	case w.health.Done():
		p.Drop(w.owner)
		return Verdict{Passed: true, Took: now.Sub(w.start)}
	case p.FailFast && w.health.FailedEarly() != nil:
		p.Drop(w.owner)
		return Verdict{Err: w.health.FailedEarly()}
	case !now.Before(w.deadline):
		p.Drop(w.owner)
		return Verdict{Err: w.health.TimedOut()}
	}
	after := w.deadline.Sub(now)
	if !w.watched {
		after = min(after, p.pollInterval())
	}
	return Verdict{After: after}
}

// track follows what a wait still waits for through the watches, after
// its first look: what is Current at once (ConfigMaps, Secrets, most
// objects without a status) never needs watching.
func (p *Waits[C]) track(ctx context.Context, w *Wait[C]) {
	if w.tracked || !w.cacheable {
		return
	}
	w.tracked = true
	w.watched = p.Watcher.Track(ctx, w.owner, w.health.Pending())
}

// look checks the objects still pending once, through the watch cache
// when every kind is watched, else through kube; what this run wrote,
// and what the watches do not follow, as writtenReader says.
func (p *Waits[C]) look(ctx context.Context, mgr *ssa.Manager, kube client.Reader, w *Wait[C]) {
	// A CEL expression may read any field: its kinds are read whole.
	uncached := func(gk schema.GroupKind) bool { return w.checks.For(gk) != nil }
	reader := kube
	if w.cacheable {
		reader = p.Watcher.Reader(kube, uncached)
	}
	if w.fresh || w.cacheable && !w.watched {
		reader = &writtenReader{Reader: reader, kube: kube, written: w.written, uncached: uncached,
			answers: w.applied.Written, settled: w.fresh && w.tracked}
	}
	mgr.Check(ctx, w.health, reader, w.checks.Status)
}

func (p *Waits[C]) pollInterval() time.Duration {
	if p.PollInterval > 0 {
		return p.PollInterval
	}
	return ssa.DefaultPollInterval
}
