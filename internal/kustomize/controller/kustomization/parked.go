package kustomization

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/healthwatch"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// parkedWait is a health check that gave its worker back: the apply is
// done and the objects roll out; a watch event on one of them (or, for
// kinds that are not watched, the poll interval) brings the Kustomization
// back to look again, and spec.timeout still bounds the whole wait. It
// lives in memory: a restarted controller applies again and waits anew.
type parkedWait struct {
	// generation, revision and token (the reconcile request annotation) it
	// was parked for: any of them changing ends the wait, and the next
	// reconcile applies again.
	generation int64
	revision   string
	token      string

	health  *ssa.Health
	checks  *healthChecks
	tracked bool // the watches follow what it waits for
	watched bool // every kind it waits for is watched: no polling
	// cacheable: the controller's own watches may serve it (watchable);
	// written are the objects its apply wrote (created or configured),
	// which the cache may not show yet: in the reconcile that applied them
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
	// checksum and changed carry what the apply saw to the end of the
	// wait: status.history and the "Health check passed" event.
	checksum string
	changed  bool
}

// parkedWaits holds the parked waits by Kustomization.
type parkedWaits struct {
	mu    sync.Mutex
	waits map[types.NamespacedName]*parkedWait
}

func (p *parkedWaits) get(key types.NamespacedName) *parkedWait {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waits[key]
}

func (p *parkedWaits) put(key types.NamespacedName, w *parkedWait) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waits == nil {
		p.waits = map[types.NamespacedName]*parkedWait{}
	}
	p.waits[key] = w
}

func (p *parkedWaits) drop(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.waits, key)
}

func keyOf(obj *kustomizev1.Kustomization) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
}

func requestToken(obj *kustomizev1.Kustomization) string {
	token, _ := meta.ReconcileAnnotationValue(obj.GetAnnotations())
	return token
}

// parked returns obj's parked wait if it still holds for obj at revision;
// one that no longer holds is dropped.
func (r *Reconciler) parked(obj *kustomizev1.Kustomization, revision string) *parkedWait {
	w := r.waits.get(keyOf(obj))
	if w == nil {
		return nil
	}
	if w.generation != obj.Generation || w.revision != revision || w.token != requestToken(obj) {
		r.unpark(obj)
		return nil
	}
	return w
}

// park starts a wait for the objects of a health check.
func (r *Reconciler) park(obj *kustomizev1.Kustomization, objects []ssa.ObjMetadata,
	checks *healthChecks, deadline time.Time, out *outcome) *parkedWait {
	now := r.now()
	w := &parkedWait{
		generation: obj.Generation, revision: out.revision, token: requestToken(obj),
		health: ssa.NewHealth(objects), checks: checks, start: now, deadline: deadline,
		checksum: out.checksum, changed: out.changed(),
		cacheable: r.Health != nil && watchable(obj), fresh: true, written: writtenBy(out.applied), applied: out.applied,
	}
	r.waits.put(keyOf(obj), w)
	return w
}

// writtenBy returns the objects cs created or changed, and which.
func writtenBy(cs *ssa.ChangeSet) map[ssa.ObjMetadata]ssa.Action {
	out := map[ssa.ObjMetadata]ssa.Action{}
	if cs == nil {
		return out
	}
	for _, e := range cs.Entries {
		if e.Action == ssa.Created || e.Action == ssa.Configured {
			out[e.ObjMetadata] = e.Action
		}
	}
	return out
}

// live is the watch cache Apply checks its memo against, nil when obj's
// objects are not the controller's to watch.
func (r *Reconciler) live(obj *kustomizev1.Kustomization) ssa.LiveReader {
	if r.Health == nil || !watchable(obj) {
		return nil
	}
	return r.Health
}

// track follows what a wait still waits for through the watches, after
// its first look: what is Current at once (ConfigMaps, Secrets, most
// objects without a status) never needs watching.
func (r *Reconciler) track(ctx context.Context, obj *kustomizev1.Kustomization, w *parkedWait) {
	if w.tracked || r.Health == nil || !watchable(obj) {
		return
	}
	w.tracked = true
	w.watched = r.Health.Track(ctx, keyOf(obj), w.health.Pending())
}

// unpark ends obj's wait, if it has one.
func (r *Reconciler) unpark(obj *kustomizev1.Kustomization) {
	r.waits.drop(keyOf(obj))
	if r.Health != nil {
		r.Health.Untrack(keyOf(obj))
	}
}

// watchable reports whether the controller's own watches may follow what
// obj applied: not when it applies as another account (the controller
// would read what that account may not) or to another cluster.
func watchable(obj *kustomizev1.Kustomization) bool {
	return obj.Spec.ServiceAccountName == "" && obj.Spec.KubeConfig == nil
}

// resumeHealth looks again at the objects of a parked wait.
func (r *Reconciler) resumeHealth(ctx context.Context, obj *kustomizev1.Kustomization, w *parkedWait, out *outcome) error {
	out.attempted, out.checksum, out.started, out.resumedChanged = true, w.checksum, w.start, w.changed
	kube, err := r.Clients.For(ctx, obj)
	if err != nil {
		r.unpark(obj)
		return r.retry(obj, meta.ReconciliationFailedReason, err)
	}
	return r.judgeHealth(ctx, obj, r.newManager(kube), kube, w, out)
}

// judgeHealth checks a wait's objects once and decides: passed, failed
// (fail-fast or timeout, as Flux words them), or still in progress.
func (r *Reconciler) judgeHealth(ctx context.Context, obj *kustomizev1.Kustomization, mgr *ssa.Manager,
	kube client.Reader, w *parkedWait, out *outcome) error {
	r.look(ctx, mgr, kube, w)
	if !w.health.Done() && !w.tracked {
		r.track(ctx, obj, w)
		if w.watched {
			// A change made before the watch knew of this wait is in the
			// cache now, one made after it queues the Kustomization: look
			// once more so that none is lost in between.
			r.look(ctx, mgr, kube, w)
		}
	}
	// Any later look follows a watch event or a deadline: the cache has
	// seen this run's writes by then.
	w.fresh, w.applied = false, nil
	now := r.now()
	switch {
	case w.health.Done():
		r.unpark(obj)
		out.healthChecked, out.healthTook = true, now.Sub(w.start)
		return nil
	case !r.Options.DisableFailFast && w.health.FailedEarly() != nil:
		r.unpark(obj)
		return r.retry(obj, meta.HealthCheckFailedReason, w.health.FailedEarly())
	case !now.Before(w.deadline):
		r.unpark(obj)
		return r.retry(obj, meta.HealthCheckFailedReason, w.health.TimedOut())
	}
	after := w.deadline.Sub(now)
	if !w.watched {
		after = min(after, r.pollInterval())
	}
	return &errs.InProgress{Err: errors.New("health checks in progress"), RequeueAfter: after}
}

// look checks the objects still pending once, through the watch cache
// when every kind is watched, else through kube; what this reconcile
// wrote, and what the watches do not follow, as writtenReader says.
func (r *Reconciler) look(ctx context.Context, mgr *ssa.Manager, kube client.Reader, w *parkedWait) {
	// A CEL expression may read any field: its kinds are read whole.
	uncached := func(gk schema.GroupKind) bool { return w.checks.For(gk) != nil }
	reader := kube
	if w.cacheable {
		reader = r.Health.Reader(kube, uncached)
	}
	if w.fresh || w.cacheable && !w.watched {
		reader = &writtenReader{Reader: reader, kube: kube, written: w.written, uncached: uncached,
			answers: w.applied.Written, settled: w.fresh && w.tracked}
	}
	mgr.Check(ctx, w.health, reader, w.checks.Status)
}

// writtenReader reads through its Reader (the watch cache, for the kinds
// watched) the objects a wait's apply did not write. A cache an instant
// behind the write would show an object before the change, healthy in its
// old generation, so the objects it wrote are judged by the API server's
// answer to the apply (answers, in the reconcile that applied them) or
// read from the API server (kube):
//   - the first look, before the watches follow the wait, reads the
//     answers: nothing fresher exists, and a read would cost a request
//     per object;
//   - the look once the watches follow it (settled) reads the cache, and
//     takes its copy when it is the write or later (same uid, and the same
//     resourceVersion or a later generation; for an object the apply
//     created, any copy of that uid). When the cache has not seen a
//     created object yet, the answer stands: the event of the creation is
//     still to come and queues the wait. Anything else is read;
//   - later looks (after a watch event, or polling the kinds not watched)
//     read them from the API server.
type writtenReader struct {
	client.Reader
	kube     client.Reader
	written  map[ssa.ObjMetadata]ssa.Action
	uncached func(schema.GroupKind) bool
	answers  func(ssa.ObjMetadata) *unstructured.Unstructured // ChangeSet.Written
	settled  bool
}

func (u *writtenReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	id := ssa.ObjMetadata{GroupKind: gvk.GroupKind(), Namespace: key.Namespace, Name: key.Name}
	action, written := u.written[id]
	if !written {
		return u.Reader.Get(ctx, key, obj, opts...)
	}
	answer := u.answers(id)
	out, isUnstructured := obj.(*unstructured.Unstructured)
	if answer == nil || !isUnstructured || answer.GroupVersionKind() != gvk {
		return u.kube.Get(ctx, key, obj, opts...)
	}
	if !u.settled {
		out.Object = answer.DeepCopy().Object
		return nil
	}
	if u.uncached(gvk.GroupKind()) {
		return u.kube.Get(ctx, key, obj, opts...)
	}
	switch err := u.Reader.Get(ctx, key, obj, opts...); {
	case err == nil && atOrAfter(out, answer, action):
		return nil
	case action == ssa.Created && (apierrors.IsNotFound(err) || err == nil && out.GetUID() != answer.GetUID()):
		out.Object = answer.DeepCopy().Object
		return nil
	}
	out.Object = nil
	out.SetGroupVersionKind(gvk)
	return u.kube.Get(ctx, key, obj, opts...)
}

// atOrAfter reports whether cached is the object an apply answered with
// answer, or a later state of it.
func atOrAfter(cached, answer *unstructured.Unstructured, action ssa.Action) bool {
	if cached.GetUID() != answer.GetUID() {
		return false
	}
	return action == ssa.Created || cached.GetResourceVersion() == answer.GetResourceVersion() ||
		cached.GetGeneration() > answer.GetGeneration()
}

func (r *Reconciler) pollInterval() time.Duration {
	if r.Options.HealthPollInterval > 0 {
		return r.Options.HealthPollInterval
	}
	return ssa.DefaultPollInterval
}

func (r *Reconciler) newManager(kube client.Client) *ssa.Manager {
	return ssa.NewManager(kube, ssa.Options{Concurrency: r.Options.ConcurrentSSA, PollInterval: r.Options.HealthPollInterval})
}

// NewHealthWatcher returns the Watcher a Reconciler's Health field takes:
// Kustomizations are its owners; c is a healthwatch.NewCache.
func NewHealthWatcher(c cache.Cache, mapper apimeta.RESTMapper) *healthwatch.Watcher {
	return healthwatch.New(c, mapper, func() client.Object { return &kustomizev1.Kustomization{} })
}
