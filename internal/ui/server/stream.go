package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/weir-gitops/weir/internal/ui/fleetview"
	"github.com/weir-gitops/weir/internal/ui/objectview"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// PingInterval is how often a stream gets a comment line, so that proxies
// keep it open.
var PingInterval = 15 * time.Second

// HealthInterval is how often a hub asks the API server whether it is
// there (/readyz), so that a page says so when it is not: the stream to
// the browser stays open while the watches behind it fail.
var HealthInterval = 5 * time.Second

// subscriberBuffer is how many messages a slow stream may fall behind
// before it is closed (the browser's EventSource reconnects and reloads).
const subscriberBuffer = 512

// hubs holds one hub per identity and namespace with streams open.
type hubs struct {
	s  *Server
	mu sync.Mutex
	m  map[string]*hub
	// probe replaces the /readyz check in tests; nil asks the API server.
	probe func(context.Context) error
}

// hub runs the watches of one identity in one namespace ("" for all) for
// as long as one of its streams is open.
type hub struct {
	cancel context.CancelFunc
	subs   map[chan []byte]struct{}
	// health is the last `event: cluster` sent, for streams that join.
	health []byte
}

// clusterMessage is an `event: cluster` payload: whether the API server
// answers, and why not.
type clusterMessage struct {
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// readyz returns a check of the API server's /readyz with cfg (every user
// may read it), its client built once.
func readyz(cfg *rest.Config) (func(context.Context) error, error) {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the health client: %w", err)
	}
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, HealthInterval)
		defer cancel()
		return c.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}, nil
}

// watchHealth sends `event: cluster` to b's streams each time the API
// server stops or starts answering check, until ctx ends.
func (h *hubs) watchHealth(ctx context.Context, b *hub, check func(context.Context) error) {
	reachable := true
	tick := time.NewTicker(HealthInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := check(ctx)
		if ctx.Err() != nil {
			return
		}
		if (err == nil) == reachable {
			continue
		}
		reachable = err == nil
		m := clusterMessage{Reachable: reachable}
		if err != nil {
			m.Error = "the API server does not answer: " + err.Error()
		}
		data, _ := json.Marshal(m)
		msg := []byte("event: cluster\ndata: " + string(data) + "\n\n")
		h.mu.Lock()
		b.health = msg
		h.mu.Unlock()
		h.broadcast(b, msg)
	}
}

func newHubs(s *Server) *hubs { return &hubs{s: s, m: map[string]*hub{}} }

// subscribe joins the hub of sess and ns, starting its watches for the
// first stream; leave ends them with the last.
func (h *hubs) subscribe(sess *session, ns string) (<-chan []byte, func(), error) {
	key := sess.hubKey() + "\x00" + ns
	ch := make(chan []byte, subscriberBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.m[key]
	if b == nil {
		ctx, cancel := context.WithCancel(context.Background())
		b = &hub{cancel: cancel, subs: map[chan []byte]struct{}{}}
		if err := h.start(ctx, b, sess, ns); err != nil {
			cancel()
			return nil, nil, err
		}
		h.m[key] = b
	}
	b.subs[ch] = struct{}{}
	if b.health != nil {
		ch <- b.health
	}
	leave := func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := b.subs[ch]; ok {
			delete(b.subs, ch)
			close(ch)
		}
		if len(b.subs) == 0 && h.m[key] == b {
			delete(h.m, key)
			b.cancel()
		}
	}
	return ch, leave, nil
}

// broadcast sends msg to every stream of b; a stream whose buffer is full
// is closed.
func (h *hubs) broadcast(b *hub, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- msg:
		default:
			delete(b.subs, ch)
			close(ch)
		}
	}
}

// start runs one dynamic informer per toolkit kind the cluster serves, and
// one on Events, with the user's config, until ctx ends.
func (h *hubs) start(ctx context.Context, b *hub, sess *session, ns string) error {
	dc, err := dynamic.NewForConfig(sess.cfg)
	if err != nil {
		return fmt.Errorf("building watch client: %w", err)
	}
	check := h.probe
	if check == nil {
		if check, err = readyz(sess.cfg); err != nil {
			return err
		}
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, ns, nil)
	stores := watched{}
	for _, k := range kinds.All {
		mapping, err := h.s.mapper.RESTMapping(k.GVK().GroupKind(), k.GroupVersion.Version)
		if apimeta.IsNoMatchError(err) {
			continue
		} else if err != nil {
			return fmt.Errorf("finding the resource of %s: %w", k.Kind, err)
		}
		inf := factory.ForResource(mapping.Resource).Informer()
		h.watchErrors(inf, k.Kind)
		stores[k.Kind] = inf.GetStore()
		if _, err := inf.AddEventHandler(h.objectHandler(b, k, stores)); err != nil {
			return fmt.Errorf("watching %s: %w", k.Kind, err)
		}
	}
	inf := factory.ForResource(corev1.SchemeGroupVersion.WithResource("events")).Informer()
	h.watchErrors(inf, "Event")
	if _, err := inf.AddEventHandler(h.eventHandler(b)); err != nil {
		return fmt.Errorf("watching events: %w", err)
	}
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		factory.Shutdown()
	}()
	go h.watchHealth(ctx, b, check)
	return nil
}

// watchErrors logs a failing watch (a kind the user may not list) once per
// kind, quietly, instead of through klog.
func (h *hubs) watchErrors(inf cache.SharedIndexInformer, kind string) {
	var once sync.Once
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		once.Do(func() { h.s.log.V(1).Info("cannot watch", "kind", kind, "error", err.Error()) })
	})
}

// objectMessage is an `event: object` payload: the object's Summary (its
// Sync judged against the watched sources) and the state it had before,
// so that a page moves its counts by one without reloading the fleet.
type objectMessage struct {
	fleetview.Summary
	// Was is the state before the change; "" for an object just created.
	Was     string `json:"was,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// watched are the hub's informer caches, by kind.
type watched map[string]cache.Store

// lookup finds an object in the caches; nil when absent.
func (w watched) lookup(r fleetview.Ref) *unstructured.Unstructured {
	st := w[r.Kind]
	if st == nil {
		return nil
	}
	key := r.Name
	if r.Namespace != "" {
		key = r.Namespace + "/" + key
	}
	obj, ok, _ := st.GetByKey(key)
	if !ok {
		return nil
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// readers are the cached Kustomizations reading source src: their Sync
// follows its artifact.
func (w watched) readers(src fleetview.Ref) []*unstructured.Unstructured {
	st := w[kinds.Kustomization.Kind]
	if st == nil {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, obj := range st.List() {
		u := objectOf(obj, kinds.Kustomization)
		if u == nil {
			continue
		}
		if r, ok := fleetview.KustomizationSource(u); ok && r == src {
			out = append(out, u)
		}
	}
	return out
}

// objectOf is the object an informer hands over, its kind set.
func objectOf(obj any, k kinds.Kind) *unstructured.Unstructured {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	u.SetKind(k.Kind)
	u.SetAPIVersion(k.GroupVersion.String())
	return u
}

// objectHandler sends a Summary on every change after the initial list
// (the page has loaded that already); a source whose artifact moved also
// sends the Kustomizations reading it, whose Sync it changed.
func (h *hubs) objectHandler(b *hub, k kinds.Kind, w watched) cache.ResourceEventHandler {
	send := func(u *unstructured.Unstructured, was string, deleted bool) {
		h.send(b, "object", objectMessage{Summary: fleetview.SummaryOf(u, w.lookup), Was: was, Deleted: deleted})
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if u := objectOf(obj, k); u != nil && !initial {
				send(u, "", false)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			old, u := objectOf(oldObj, k), objectOf(obj, k)
			if u == nil {
				return
			}
			was := ""
			if old != nil {
				was = fleetview.State(old)
			}
			send(u, was, false)
			if k.Source && old != nil && fleetview.ArtifactRevision(old) != fleetview.ArtifactRevision(u) {
				src := fleetview.Ref{Kind: k.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
				for _, r := range w.readers(src) {
					send(r, fleetview.State(r), false)
				}
			}
		},
		DeleteFunc: func(obj any) {
			if u := objectOf(obj, k); u != nil {
				send(u, fleetview.State(u), true)
			}
		},
	}
}

type k8sEventMessage struct {
	Ref   fleetview.Ref    `json:"ref"`
	Event objectview.Event `json:"event"`
}

// eventHandler sends the Events about toolkit objects, new or repeated.
func (h *hubs) eventHandler(b *hub) cache.ResourceEventHandler {
	send := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		var ev corev1.Event
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ev); err != nil {
			return
		}
		if !strings.Contains(ev.InvolvedObject.APIVersion, ".toolkit.fluxcd.io/") {
			return
		}
		ref := fleetview.Ref{Kind: ev.InvolvedObject.Kind, Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name}
		h.send(b, "k8sevent", k8sEventMessage{Ref: ref, Event: objectview.EventOf(&ev)})
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				send(obj)
			}
		},
		UpdateFunc: func(_, obj any) { send(obj) },
	}
}

func (h *hubs) send(b *hub, event string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	h.broadcast(b, []byte("event: "+event+"\ndata: "+string(data)+"\n\n"))
}

// stream serves /api/stream: server-sent events until the client leaves.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sess *session) {
	ch, leave, err := s.hubs.subscribe(sess, r.URL.Query().Get("namespace"))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	defer leave()
	rc := startEvents(w)
	_, _ = w.Write([]byte("retry: 2000\n: connected\n\n"))
	_ = rc.Flush()
	ping := time.NewTicker(PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			if _, err := w.Write(msg); err != nil {
				return
			}
		case <-ping.C:
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// startEvents answers 200 as a stream of server-sent events, unbuffered.
func startEvents(w http.ResponseWriter) *http.ResponseController {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return http.NewResponseController(w)
}
