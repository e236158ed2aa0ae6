package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/apply/healthwatch"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// parkedWait is the wait of an install or upgrade that Helm ran without
// its waiter (release.Parks): the release is deployed in storage, its
// objects roll out, and a watch event on one of them (or, for a kind that
// cannot be watched, the poll interval) brings the HelmRelease back to
// look again; the action's timeout bounds the wait, from when Helm
// returned. It lives in memory; a restarted controller rebuilds it from
// the release in storage (release.Unverified), with the deadline counted
// from the release's lastDeployed.
type parkedWait struct {
	// name, namespace and version of the revision waited for.
	name, namespace string
	version         int
	rel             *releasev1.Release
	action          release.Action
	// previous is the status history gave the revision the upgrade
	// replaced, which a failed wait puts back.
	previous string
	objects  []ssa.ObjMetadata // in the manifest's order
	health   *ssa.Health
	status   ssa.StatusFunc
	deadline time.Time
	// seen holds what the first look read from the API server of each
	// object: a cached copy older than that (the watch has not delivered
	// Helm's write yet) is read from the API server again.
	seen    map[ssa.ObjMetadata]seenObject
	looked  bool
	tracked bool
	watched bool
}

type seenObject struct {
	uid        types.UID
	generation int64
}

// parkedWaits holds the parked waits by HelmRelease.
type parkedWaits struct{ m sync.Map }

func (p *parkedWaits) get(key types.NamespacedName) *parkedWait {
	w, _ := p.m.Load(key)
	wait, _ := w.(*parkedWait)
	return wait
}

func (p *parkedWaits) put(key types.NamespacedName, w *parkedWait) { p.m.Store(key, w) }

func (p *parkedWaits) drop(key types.NamespacedName) { p.m.Delete(key) }

// parks reports whether the controller may park obj's waits: it follows
// them through its own watches, so the release must be Helm's with the
// controller's own identity (no impersonation, no remote cluster).
func (r *Reconciler) parks(obj *helmv2.HelmRelease) bool {
	if r.Health == nil || obj.Spec.ServiceAccountName != "" || obj.Spec.KubeConfig != nil {
		return false
	}
	return r.Clusters == nil || r.Clusters.DefaultServiceAccount == ""
}

// unpark ends obj's parked wait, if it has one.
func (r *Reconciler) unpark(key types.NamespacedName) {
	r.waits.drop(key)
	if r.Health != nil {
		r.Health.Untrack(key)
	}
}

// park starts the wait of rel, which action a just wrote, and looks at
// its objects a first time.
func (x *run) park(ctx context.Context, rel *releasev1.Release, a release.Action, previous string) error {
	w, err := x.newWait(rel, a, previous, x.now().Add(release.ActionTimeout(x.obj, a)))
	if err != nil {
		return x.finishWait(ctx, rel, a, err)
	}
	x.r.waits.put(client.ObjectKeyFromObject(x.obj), w)
	if err := x.helm.Hold(rel, a, previous); err != nil {
		x.r.unpark(client.ObjectKeyFromObject(x.obj))
		return &errs.Generic{Err: err, Reason: helmv2.ReconciliationFailedReason}
	}
	return x.judge(ctx, w)
}

func (x *run) newWait(rel *releasev1.Release, a release.Action, previous string, deadline time.Time) (*parkedWait, error) {
	objects, err := release.WaitedFor(rel, x.r.Client.IsObjectNamespaced)
	if err != nil {
		return nil, err
	}
	return &parkedWait{
		name: rel.Name, namespace: rel.Namespace, version: rel.Version, rel: rel, action: a, previous: previous,
		objects: objects, health: ssa.NewHealth(objects), status: release.WaitStatus(release.WaitsForJobs(x.obj, a)),
		deadline: deadline, seen: map[ssa.ObjMetadata]seenObject{},
	}, nil
}

// resumable returns the parked wait of latest, the newest revision in
// storage, when it is one: the wait in memory, or the one a restarted
// controller left, rebuilt. A release that no longer is the one waited
// for (a new spec, someone else's revision) ends the wait.
func (x *run) resumable(latest *release.Info) (*parkedWait, error) {
	key := client.ObjectKeyFromObject(x.obj)
	if w := x.r.waits.get(key); w != nil {
		// A wait under way ends as Helm's would, whatever the spec says
		// now: the next decision reads the new spec.
		if latest != nil && w.name == latest.Name && w.namespace == latest.Namespace && w.version == latest.Version &&
			(latest.Pending() || latest.Status == rcommon.StatusDeployed) {
			return w, nil
		}
		x.r.unpark(key)
	}
	a, ok := release.Unverified(x.obj, latest, x.desired)
	if !ok || !x.r.parks(x.obj) {
		return nil, nil
	}
	rel := x.helm.Last()
	previous := ""
	if prev := x.obj.Status.History.Latest(); prev != nil {
		previous = prev.Status
	}
	start := x.now()
	if rel.Info != nil && !rel.Info.LastDeployed.IsZero() {
		start = rel.Info.LastDeployed
	}
	w, err := x.newWait(rel, a, previous, start.Add(release.ActionTimeout(x.obj, a)))
	if err != nil {
		return nil, err
	}
	x.r.waits.put(key, w)
	return w, nil
}

// judge looks at a wait's objects once and decides: passed, timed out,
// or still in progress (the worker is given back).
func (x *run) judge(ctx context.Context, w *parkedWait) error {
	x.look(ctx, w)
	if !w.health.Done() && !w.tracked {
		w.tracked = true
		w.watched = x.r.Health.Track(ctx, client.ObjectKeyFromObject(x.obj), w.health.Pending())
		if w.watched {
			// A change made before the watch knew of this wait is in the
			// cache now, one made after it queues the HelmRelease.
			x.look(ctx, w)
		}
	}
	now := x.now()
	switch {
	case w.health.Done():
		if err := x.helm.Settle(w.rel, w.action); err != nil {
			// Nothing recorded: the next reconcile finds the wait again.
			return &errs.Generic{Err: err, Reason: helmv2.ReconciliationFailedReason}
		}
		x.r.unpark(client.ObjectKeyFromObject(x.obj))
		return x.finishWait(ctx, w.rel, w.action, nil)
	case !now.Before(w.deadline):
		timedOut := release.WaitTimedOut(w.objects, w.health)
		if err := x.helm.FailWait(w.rel, w.action, timedOut, w.previous); err != nil {
			return &errs.Generic{Err: err, Reason: helmv2.ReconciliationFailedReason}
		}
		x.r.unpark(client.ObjectKeyFromObject(x.obj))
		return x.finishWait(ctx, w.rel, w.action, timedOut)
	}
	after := w.deadline.Sub(now)
	if !w.watched {
		after = min(after, ssa.DefaultPollInterval)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Helm wait parked", "release", w.rel.Name, "version", w.version, "pending", len(w.health.Pending()))
	return &errs.InProgress{Err: errors.New("waiting for the release's objects"), RequeueAfter: after}
}

// look checks the objects still pending once: the first look reads them
// from the API server (the watches may not have delivered Helm's writes),
// the later ones through the watch cache.
func (x *run) look(ctx context.Context, w *parkedWait) {
	mgr := ssa.NewManager(x.r.Client, ssa.Options{})
	if !w.looked {
		w.looked = true
		mgr.Check(ctx, w.health, &seeingReader{Reader: x.r.APIReader, seen: w.seen}, w.status)
		return
	}
	cached := x.r.Health.Reader(x.r.APIReader, nil)
	mgr.Check(ctx, w.health, &freshReader{Reader: cached, api: x.r.APIReader, seen: w.seen}, w.status)
}

// finishWait ends an install's or upgrade's wait as the action would
// have ended with Helm's waiter: status, history, events and
// remediation are released's, from what the action wrote.
func (x *run) finishWait(ctx context.Context, rel *releasev1.Release, a release.Action, err error) error {
	verb := string(a)
	written := x.recordWritten(verb)
	if written == nil {
		// A later reconcile than the action's: what storage holds.
		if prev := x.helm.Previous(rel); prev != nil {
			x.record(release.InfoOf(prev), "")
		}
		written = release.InfoOf(rel)
		x.record(written, verb)
	}
	// The action began when Helm deployed the revision; the wait is part
	// of it, as it is of an action that waits with Helm's waiter.
	started := x.now()
	if rel.Info != nil && !rel.Info.LastDeployed.IsZero() {
		started = rel.Info.LastDeployed
	}
	return x.released(ctx, verb, err, written, started)
}

// seeingReader reads from the API server and remembers what it read;
// the health check reads several objects at once, hence the lock.
type seeingReader struct {
	client.Reader
	mu   sync.Mutex
	seen map[ssa.ObjMetadata]seenObject
}

func (s *seeingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := s.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[idOf(obj, key)] = seenObject{uid: obj.GetUID(), generation: obj.GetGeneration()}
	return nil
}

// freshReader reads through the watch cache, and from the API server an
// object whose cached copy is older than what the first look saw.
type freshReader struct {
	client.Reader
	api  client.Reader
	seen map[ssa.ObjMetadata]seenObject
}

func (f *freshReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	seen, ok := f.seen[idOf(obj, key)]
	err := f.Reader.Get(ctx, key, obj, opts...)
	switch {
	case !ok:
		return err
	case apierrors.IsNotFound(err), err == nil && (obj.GetUID() != seen.uid || obj.GetGeneration() < seen.generation):
		return f.api.Get(ctx, key, obj, opts...)
	}
	return err
}

func idOf(obj client.Object, key client.ObjectKey) ssa.ObjMetadata {
	return ssa.ObjMetadata{GroupKind: obj.GetObjectKind().GroupVersionKind().GroupKind(), Namespace: key.Namespace, Name: key.Name}
}

func (x *run) now() time.Time {
	if x.r.Now != nil {
		return x.r.Now()
	}
	return time.Now()
}

// WatchHealth makes install and upgrade waits park: a cache of the kinds
// being waited for, started by mgr, wakes a HelmRelease when one of its
// release's objects changes (parked.go).
func (r *Reconciler) WatchHealth(mgr ctrl.Manager) error {
	c, err := healthwatch.NewCache(mgr.GetConfig(), mgr.GetRESTMapper(), nil)
	if err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("adding the Helm wait cache: %w", err)
	}
	r.Health = healthwatch.New(c, mgr.GetRESTMapper(), func() client.Object { return &helmv2.HelmRelease{} })
	return nil
}
