package healthwatch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// informerTimeout bounds the first list of a kind: a kind that cannot be
// listed in that time is read from the API server instead.
const informerTimeout = 30 * time.Second

// retryAfter is how long a kind that could not be watched is read from the
// API server before the Watcher tries to watch it again.
const retryAfter = 2 * time.Minute

// lastAppliedAnnotation is kubectl's copy of the applied object, as large
// as the object and never read by a status check.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// appliedAnnotation carries, in a cached view only, the object's
// AppliedDigest as the function given to NewCache computed it from the
// managed fields the view drops.
const appliedAnnotation = "healthwatch.weir.internal/applied"

// NewCache returns the cache a Watcher reads through, over all namespaces
// (what a Kustomization applies may live anywhere). It stores a status
// view of each object (statusView), not the object, and in it what
// applied returns for the object (nil: nothing), which Live tells. The
// caller adds it to the manager, which starts it.
func NewCache(cfg *rest.Config, mapper meta.RESTMapper, applied func(metav1.Object) string) (cache.Cache, error) {
	c, err := cache.New(cfg, cache.Options{Mapper: mapper, DefaultTransform: stripper(applied)})
	if err != nil {
		return nil, fmt.Errorf("creating the health check cache: %w", err)
	}
	return c, nil
}

// stripper returns the cache's transform: a status view of each object,
// with its applied digest.
func stripper(applied func(metav1.Object) string) toolscache.TransformFunc {
	// An informer may transform an object it holds again (client-go's
	// relists): a view keeps the digest it already carries.
	digest := func(o metav1.Object) string {
		if !hasManagedFields(o) || applied == nil {
			return o.GetAnnotations()[appliedAnnotation]
		}
		return applied(o)
	}
	return func(in any) (any, error) {
		switch o := in.(type) {
		case *unstructured.Unstructured:
			v := statusView(o)
			if d := digest(o); d != "" {
				v.SetAnnotations(map[string]string{appliedAnnotation: d})
			}
			return v, nil
		case *metav1.PartialObjectMetadata:
			return metadataView(o, digest(o)), nil
		}
		return strip(in)
	}
}

// hasManagedFields reports whether o has managed fields. An unstructured
// object's are looked up, not converted: GetManagedFields converts the
// whole list through reflection, and applied converts it once more.
func hasManagedFields(o metav1.Object) bool {
	if u, ok := o.(*unstructured.Unstructured); ok {
		mf, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
		list, _ := mf.([]any)
		return len(list) > 0
	}
	return len(o.GetManagedFields()) > 0
}

// metadataView is what the cache keeps of an object watched by its
// metadata only: what a status view keeps of metadata.
func metadataView(o *metav1.PartialObjectMetadata, applied string) *metav1.PartialObjectMetadata {
	v := &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion,
		Generation: o.Generation, Labels: o.Labels, CreationTimestamp: o.CreationTimestamp,
		DeletionTimestamp: o.DeletionTimestamp,
	}}
	if applied != "" {
		v.Annotations = map[string]string{appliedAnnotation: applied}
	}
	return v
}

func strip(in any) (any, error) {
	obj, err := meta.Accessor(in)
	if err != nil {
		return in, nil //nolint:nilerr // not an object (a tombstone): stored as it is
	}
	obj.SetManagedFields(nil)
	if a := obj.GetAnnotations(); a[lastAppliedAnnotation] != "" {
		delete(a, lastAppliedAnnotation)
		obj.SetAnnotations(a)
	}
	return in, nil
}

// statusView is what a status check reads of u, and only that: its
// identity, generation and deletion (kstatus's generic rules), the whole
// status, and the few spec fields kstatus reads for its kind
// (sigs.k8s.io/cli-utils/pkg/kstatus/status/core.go). The cache holds
// every object of each waited-for kind in the cluster, and a workload's
// spec (its pod template above all), annotations and managed fields are
// most of it. A check that reads anything else (a CEL expression of
// healthCheckExprs) reads the whole object from the API server instead
// (Reader's uncached).
func statusView(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := make(map[string]any, 5)
	for _, k := range []string{"apiVersion", "kind", "status"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		out["metadata"] = pick(md, keptMetadata)
	}
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		if fields := specRead[u.GroupVersionKind().GroupKind()]; len(fields) > 0 {
			if kept := pick(spec, fields); len(kept) > 0 {
				out["spec"] = kept
			}
		}
	}
	return &unstructured.Unstructured{Object: out}
}

func pick(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// keptMetadata is the metadata a status view keeps: identity, labels,
// and what kstatus's generic rules read (generation, deletionTimestamp;
// creationTimestamp for a Pod's scheduling window).
var keptMetadata = []string{
	"name", "namespace", "uid", "resourceVersion", "generation", "labels", "creationTimestamp", "deletionTimestamp",
}

// specRead are the spec fields kstatus reads, by kind; every other kind's
// spec is dropped. Deployments keep paused for the tools that report it.
var specRead = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:  {"replicas", "progressDeadlineSeconds", "paused"},
	{Group: "apps", Kind: "StatefulSet"}: {"replicas", "updateStrategy"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"replicas"},
	{Group: "batch", Kind: "Job"}:        {"parallelism", "completions"},
	{Kind: "Service"}:                    {"type", "clusterIP"},
}

// metadataOnly are kinds the cache watches by their metadata alone:
// Secrets, whose data is never held (the API server does not even send
// it); a Secret is Current as soon as it exists, which is all a status
// check reads of it.
var metadataOnly = map[schema.GroupKind]bool{{Kind: "Secret"}: true}

// Watcher follows the objects owners wait for. Owners are objects of one
// kind (the controller's), named by namespace and name.
type Watcher struct {
	cache    cache.Cache
	mapper   meta.RESTMapper
	newOwner func() client.Object
	events   chan event.GenericEvent

	mu       sync.Mutex
	waiters  map[ssa.ObjMetadata]map[types.NamespacedName]struct{}
	tracked  map[types.NamespacedName][]ssa.ObjMetadata
	watching map[schema.GroupKind]schema.GroupVersionKind // kinds watched, in the version their informer lists
	failed   map[schema.GroupKind]time.Time               // kinds that could not be, and when
}

// New returns a Watcher reading through c (see NewCache). newOwner returns
// an empty object of the owners' kind, for the events Source sends.
func New(c cache.Cache, mapper meta.RESTMapper, newOwner func() client.Object) *Watcher {
	return &Watcher{
		cache: c, mapper: mapper, newOwner: newOwner,
		events:   make(chan event.GenericEvent, 1024),
		waiters:  map[ssa.ObjMetadata]map[types.NamespacedName]struct{}{},
		tracked:  map[types.NamespacedName][]ssa.ObjMetadata{},
		watching: map[schema.GroupKind]schema.GroupVersionKind{},
		failed:   map[schema.GroupKind]time.Time{},
	}
}

// Source queues an owner when an object it waits for changes; the
// controller of the owners' kind watches it.
func (w *Watcher) Source() source.Source {
	return source.Channel(w.events, &handler.EnqueueRequestForObject{})
}

// Reader reads objects of watched kinds from the cache (their status
// view) and every other object through fallback (the API server), as
// well as the kinds uncached reports (nil: none), whose checks read more
// than a status view holds.
func (w *Watcher) Reader(fallback client.Reader, uncached func(schema.GroupKind) bool) client.Reader {
	return &reader{w: w, fallback: fallback, uncached: uncached}
}

type reader struct {
	w        *Watcher
	fallback client.Reader
	uncached func(schema.GroupKind) bool
}

func (r *reader) from(obj client.Object) client.Reader {
	gk := obj.GetObjectKind().GroupVersionKind().GroupKind()
	if r.uncached != nil && r.uncached(gk) {
		return r.fallback
	}
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	if _, ok := r.w.watching[gk]; ok {
		return r.w.cache
	}
	return r.fallback
}

func (r *reader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	from := r.from(obj)
	u, isUnstructured := obj.(*unstructured.Unstructured)
	gk := obj.GetObjectKind().GroupVersionKind().GroupKind()
	if from != r.w.cache || !metadataOnly[gk] {
		return from.Get(ctx, key, obj, opts...)
	}
	if !isUnstructured {
		return r.fallback.Get(ctx, key, obj, opts...)
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(u.GroupVersionKind())
	if err := r.w.cache.Get(ctx, key, m, opts...); err != nil {
		return err
	}
	md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m.ObjectMeta)
	if err != nil {
		return fmt.Errorf("converting the metadata of %s: %w", key, err)
	}
	u.Object = map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": md}
	return nil
}

func (r *reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.fallback.List(ctx, list, opts...)
}

// Track makes owner wait for objects, replacing what it waited for
// before, and starts a watch for each kind not watched yet. It reports
// whether every kind is watched; when not, the owner must poll too (Reader
// reads the kinds not watched from the API server).
func (w *Watcher) Track(ctx context.Context, owner types.NamespacedName, objects []ssa.ObjMetadata) bool {
	all := true
	for _, gk := range kinds(objects) {
		if !w.watch(ctx, gk) {
			all = false
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.untrackLocked(owner)
	w.tracked[owner] = objects
	for _, id := range objects {
		set := w.waiters[id]
		if set == nil {
			set = map[types.NamespacedName]struct{}{}
			w.waiters[id] = set
		}
		set[owner] = struct{}{}
	}
	return all
}

// Untrack forgets what owner waits for.
func (w *Watcher) Untrack(owner types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.untrackLocked(owner)
}

// Tracked returns how many owners wait, for tests and metrics.
func (w *Watcher) Tracked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.tracked)
}

func (w *Watcher) untrackLocked(owner types.NamespacedName) {
	for _, id := range w.tracked[owner] {
		if set := w.waiters[id]; set != nil {
			delete(set, owner)
			if len(set) == 0 {
				delete(w.waiters, id)
			}
		}
	}
	delete(w.tracked, owner)
}

// watch starts the watch of gk once; it reports whether gk is watched.
// A kind that could not be watched is tried again after retryAfter (its
// definition may have appeared meanwhile), not at every Track: a list
// that hangs would stall every reconcile for informerTimeout.
func (w *Watcher) watch(ctx context.Context, gk schema.GroupKind) bool {
	_, ok := w.watchedAs(ctx, gk)
	return ok
}

// watchedAs starts the watch of gk once, and returns the version its
// informer lists gk in, and whether gk is watched.
func (w *Watcher) watchedAs(ctx context.Context, gk schema.GroupKind) (schema.GroupVersionKind, bool) {
	w.mu.Lock()
	gvk, ok := w.watching[gk]
	failed, hasFailed := w.failed[gk]
	w.mu.Unlock()
	if ok || hasFailed && time.Since(failed) < retryAfter {
		return gvk, ok
	}
	gvk, err := w.startInformer(ctx, gk)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failed[gk] = time.Now()
		return schema.GroupVersionKind{}, false
	}
	delete(w.failed, gk)
	w.watching[gk] = gvk
	return gvk, true
}

// cached returns an empty object of gvk of the type the cache holds it in.
func cached(gvk schema.GroupVersionKind) client.Object {
	if metadataOnly[gvk.GroupKind()] {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		return m
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// Live tells what the cache holds of an object: its uid, resourceVersion
// and applied digest (ssa.LiveReader), starting the watch of its kind if
// need be. It answers false for an object the cache does not hold, and
// for a kind it cannot watch.
func (w *Watcher) Live(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (ssa.LiveView, bool) {
	listed, ok := w.watchedAs(ctx, gvk.GroupKind())
	if !ok {
		return ssa.LiveView{}, false
	}
	obj := cached(listed)
	if err := w.cache.Get(ctx, key, obj); err != nil {
		return ssa.LiveView{}, false
	}
	return ssa.LiveView{UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(),
		Applied: obj.GetAnnotations()[appliedAnnotation]}, true
}

func (w *Watcher) startInformer(ctx context.Context, gk schema.GroupKind) (schema.GroupVersionKind, error) {
	mapping, err := w.mapper.RESTMapping(gk)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	gvk := mapping.GroupVersionKind
	ctx, cancel := context.WithTimeout(ctx, informerTimeout)
	defer cancel()
	inf, err := w.cache.GetInformer(ctx, cached(gvk))
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.changed(gk, o) },
		UpdateFunc: func(_, o any) { w.changed(gk, o) },
		DeleteFunc: func(o any) { w.changed(gk, o) },
	})
	return gvk, err
}

// changed queues the owners of the object o of kind gk.
func (w *Watcher) changed(gk schema.GroupKind, o any) {
	if tomb, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = tomb.Obj
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return
	}
	id := ssa.ObjMetadata{GroupKind: gk, Namespace: m.GetNamespace(), Name: m.GetName()}
	w.mu.Lock()
	owners := make([]types.NamespacedName, 0, len(w.waiters[id]))
	for owner := range w.waiters[id] {
		owners = append(owners, owner)
	}
	w.mu.Unlock()
	for _, owner := range owners {
		obj := w.newOwner()
		obj.SetNamespace(owner.Namespace)
		obj.SetName(owner.Name)
		w.events <- event.GenericEvent{Object: obj}
	}
}

func kinds(objects []ssa.ObjMetadata) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	for _, id := range objects {
		if !seen[id.GroupKind] {
			seen[id.GroupKind] = true
			out = append(out, id.GroupKind)
		}
	}
	return out
}
