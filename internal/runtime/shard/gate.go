package shard

import (
	"context"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Gate stands at the head of one controller's Reconcile: a request for an
// object this member does not own, or not yet (the barrier), ends there.
// It sits after the work queue, not in the watches' predicates, because
// ownership is decided when the reconcile would start: an event filtered
// out before a hand-over would be lost to the new owner.
type Gate struct {
	m      *Member
	kind   string
	next   crreconcile.Reconciler
	proto  client.Object
	events chan event.GenericEvent

	mu sync.Mutex
	// known are the objects of kind that exist, as the watch's create and
	// delete events say, true for those owned but held back by the
	// barrier. A deleted object is dropped, so the map follows the fleet
	// rather than everything it ever held.
	known map[types.NamespacedName]bool
}

// Gate wraps next, the reconciler of kind (obj is an empty object of it),
// and returns the source of the requeues a hand-over brings and the
// handler that must watch kind to keep track of its objects (it enqueues
// nothing).
func (m *Member) Gate(kind string, obj client.Object, next crreconcile.Reconciler) (
	crreconcile.Reconciler, source.Source, handler.EventHandler) {
	g := &Gate{m: m, kind: kind, next: next, proto: obj, events: make(chan event.GenericEvent, 1024),
		known: map[types.NamespacedName]bool{}}
	m.mu.Lock()
	m.gates = append(m.gates, g)
	m.mu.Unlock()
	track := handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[crreconcile.Request]) {
			g.seen(e.Object)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[crreconcile.Request]) {
			g.forget(e.Object)
		},
	}
	return g, source.Channel(g.events, &handler.EnqueueRequestForObject{}), track
}

// seen records an object of kind that exists (a create event, or the
// initial list), keeping its held-back mark if it had one.
func (g *Gate) seen(obj client.Object) {
	k := client.ObjectKeyFromObject(obj)
	g.mu.Lock()
	if _, ok := g.known[k]; !ok {
		g.known[k] = false
	}
	g.mu.Unlock()
}

// forget drops a deleted object: no hand-over requeues it.
func (g *Gate) forget(obj client.Object) {
	g.mu.Lock()
	delete(g.known, client.ObjectKeyFromObject(obj))
	g.mu.Unlock()
}

// knownCount is how many objects of kind the gate tracks.
func (g *Gate) knownCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.known)
}

// Reconcile runs next for an owned object, and logs each run's start and
// end at debug level (the per-object reconcile log hand-overs are checked
// with).
func (g *Gate) Reconcile(ctx context.Context, req crreconcile.Request) (ctrl.Result, error) {
	key := req.String()
	admitted, owned := g.m.admit(g.kind, key)
	g.mu.Lock()
	// Only objects the watch says exist: a request that reaches here
	// after the object's delete event (the event's own, or a requeue)
	// does not bring it back.
	if _, ok := g.known[req.NamespacedName]; ok {
		g.known[req.NamespacedName] = owned && !admitted
	}
	g.mu.Unlock()
	if !admitted {
		if owned {
			return ctrl.Result{RequeueAfter: g.m.cfg.LeaseDuration / 3}, nil
		}
		return ctrl.Result{}, nil
	}
	defer g.m.done(g.kind, key)
	log := ctrl.LoggerFrom(ctx).WithValues("member", g.m.cfg.Identity, "object", g.kind+"/"+key)
	log.V(1).Info("shard reconcile started")
	defer log.V(1).Info("shard reconcile finished")
	return g.next.Reconcile(ctx, req)
}

// handOver requeues, once v is in force, the objects v gives this member
// that prev did not, and those the barrier held back.
func (g *Gate) handOver(prev, v View) {
	me := g.m.cfg.Identity
	var keys []types.NamespacedName
	g.mu.Lock()
	for k, held := range g.known {
		s := k.String()
		if v.Owner(s) == me && (held || prev.Owner(s) != me) {
			keys = append(keys, k)
		}
	}
	g.mu.Unlock()
	go func() {
		for _, k := range keys {
			obj, ok := g.proto.DeepCopyObject().(client.Object)
			if !ok {
				return
			}
			obj.SetNamespace(k.Namespace)
			obj.SetName(k.Name)
			g.events <- event.GenericEvent{Object: obj}
		}
	}()
}

// Fence wraps a transport so no write leaves this process unless the
// member's Lease is held with margin: a replica that was paused past its
// renew deadline, and whose objects may have moved, writes nothing. Reads
// (GET, watches) pass.
func (m *Member) Fence(rt http.RoundTripper) http.RoundTripper { return fence{m: m, next: rt} }

type fence struct {
	m    *Member
	next http.RoundTripper
}

func (f fence) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := f.m.Held(); err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
	}
	return f.next.RoundTrip(req)
}
