package ssa

import (
	"context"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EarlyPlans reads and dry-runs the objects of a build while the rest of
// the build is still running, so that the API server validates the first
// objects while the controller renders the last ones. It plans exactly as
// Apply does (the memo, the watch cache, the list reads, the dry-run with
// its re-read); it writes nothing, so Apply's rule that a stage is
// validated as a whole before any of it is written holds: Apply takes the
// plans that succeeded for objects it is given unchanged and plans the
// others itself. A failed early plan is planned again by Apply, so that a
// fault is reported as it would have been.
//
// Early plans are only worth making, and only made, when every object of
// the build is in one apply stage (OneStage): a stage that writes first
// (a Namespace, a CRD) could change what the dry-runs of the later stages
// answer, and they would all be made twice.
//
// Requests stay within the Manager's concurrency: the objects handed to
// Add are planned one batch after the other, each with at most
// concurrency requests in flight, and Apply starts its own only once the
// early plans are done.
type EarlyPlans struct {
	m      *Manager
	opts   ApplyOptions
	ctx    context.Context
	cancel context.CancelFunc
	// batches carries the prepared objects of each Add to the planner.
	batches chan []*unstructured.Unstructured
	done    chan struct{}

	mu     sync.Mutex
	plans  map[ObjMetadata]*plan
	groups map[listGroup]*groupListing
	closed bool
}

// groupListing is what the list reads of one kind and namespace learned,
// kept across batches so that each is read at most once.
type groupListing struct {
	// labelled are the objects carrying the owner's labels; nil until
	// listed, or when the list failed.
	labelled map[ObjMetadata]*unstructured.Unstructured
	// present are the names of all objects of the group; nil until
	// listed, or when the list failed.
	present      map[string]bool
	listedLabels bool
	listedNames  bool
}

// OneStage reports whether objects of the kinds gks all fall in one
// apply stage (with the custom stage kinds of ApplyOptions).
func OneStage(gks []schema.GroupKind, customStageKinds []schema.GroupKind) bool {
	custom := make(map[schema.GroupKind]bool, len(customStageKinds))
	for _, gk := range customStageKinds {
		custom[gk] = true
	}
	for _, gk := range gks {
		if stageOf(gk, custom) != stageOf(gks[0], custom) {
			return false
		}
	}
	return true
}

// EarlyPlans starts planning objects with opts (the options Apply will be
// given) until Apply takes the plans or Stop is called.
func (m *Manager) EarlyPlans(ctx context.Context, opts ApplyOptions) *EarlyPlans {
	ctx, cancel := context.WithCancel(ctx)
	e := &EarlyPlans{
		m: m, opts: opts.withDefaults(), ctx: ctx, cancel: cancel,
		batches: make(chan []*unstructured.Unstructured, 64),
		done:    make(chan struct{}),
		plans:   map[ObjMetadata]*plan{},
		groups:  map[listGroup]*groupListing{},
	}
	go e.run()
	return e
}

// Add plans objects, which the caller will not change, in the
// background. Objects Apply could not take (no apiVersion, kind or name,
// twice the same) are left to Apply, and so are those the memo knows:
// Apply counts most of them unchanged without a request (a new revision
// that changes one object of many), and planning them twice would only
// cost the controller's CPU.
func (e *EarlyPlans) Add(objects []*unstructured.Unstructured) {
	prepared, err := prepare(objects, e.opts.Owner)
	if err != nil {
		return
	}
	desired := prepared[:0]
	for _, obj := range prepared {
		if !e.opts.Memo.knows(ObjMetadataOf(obj)) {
			desired = append(desired, obj)
		}
	}
	if len(desired) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	select {
	case e.batches <- desired:
	default:
		// The planner is far behind: Apply plans these itself.
	}
}

// Stop ends the planning (it is no longer needed: the build failed) and
// waits for the requests in flight. It may be called more than once, and
// after Apply.
func (e *EarlyPlans) Stop() {
	e.cancel()
	e.finish()
}

// finish stops taking batches, waits until those taken are planned and
// returns the plans that succeeded.
func (e *EarlyPlans) finish() map[ObjMetadata]*plan {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.batches)
	}
	e.mu.Unlock()
	<-e.done
	return e.plans
}

func (e *EarlyPlans) run() {
	defer close(e.done)
	for batch := range e.batches {
		if e.ctx.Err() != nil {
			continue
		}
		e.planBatch(batch)
	}
}

// planBatch plans one batch as applyStage plans a stage (its objects are
// unknown to the memo, so none is remembered).
func (e *EarlyPlans) planBatch(objs []*unstructured.Unstructured) {
	plans := make([]*plan, len(objs))
	listed := e.list(objs)
	_ = forEach(e.ctx, len(objs), e.m.concurrency, func(ctx context.Context, i int) error {
		p, err := e.m.plan(ctx, objs[i], listed.get(ObjMetadataOf(objs[i])), e.opts)
		if err == nil {
			plans[i] = p
		}
		return nil
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range plans {
		if p != nil {
			e.plans[ObjMetadataOf(p.desired)] = p
		}
	}
}

// list answers for objs from the list reads of their kinds and
// namespaces, reading a group's labelled objects the first time two of
// objs belong to it and its names the first time two of them are not
// among the labelled, as Manager.list does for a whole stage.
func (e *EarlyPlans) list(objs []*unstructured.Unstructured) *listing {
	out := &listing{objects: map[ObjMetadata]lookup{}}
	if e.opts.Owner == nil {
		return out
	}
	members := map[listGroup][]ObjMetadata{}
	var order []listGroup
	for _, obj := range objs {
		g := listGroup{gvk: obj.GroupVersionKind(), namespace: obj.GetNamespace()}
		if _, ok := members[g]; !ok {
			order = append(order, g)
		}
		members[g] = append(members[g], ObjMetadataOf(obj))
	}
	for _, g := range order {
		ids := members[g]
		gl := e.groups[g]
		if gl == nil {
			gl = &groupListing{}
			e.groups[g] = gl
		}
		if len(ids) >= 2 && !gl.listedLabels {
			gl.listedLabels = true
			gl.labelled, _ = e.m.listLabelled(e.ctx, g, e.opts.Owner)
		}
		if gl.labelled == nil {
			continue
		}
		var missing []ObjMetadata
		for _, id := range ids {
			if obj, ok := gl.labelled[id]; ok {
				out.objects[id] = lookup{obj: obj.DeepCopy(), known: true}
			} else {
				missing = append(missing, id)
			}
		}
		if len(missing) >= 2 && !gl.listedNames {
			gl.listedNames = true
			gl.present, _ = e.m.listNames(e.ctx, g)
		}
		for _, id := range missing {
			if gl.present != nil && !gl.present[id.Name] {
				out.objects[id] = lookup{known: true}
			}
		}
	}
	return out
}

// takeEarly fills plans[i] with the early plan of objs[i] when there is
// one for the very same prepared object, and returns the objects left to
// plan (rest, those without a plan yet, when there are no early plans).
func takeEarly(early map[ObjMetadata]*plan, rest, objs []*unstructured.Unstructured, plans []*plan) []*unstructured.Unstructured {
	if len(early) == 0 {
		return rest
	}
	rest = nil
	for i, obj := range objs {
		if plans[i] != nil {
			continue
		}
		if p := early[ObjMetadataOf(obj)]; p != nil && reflect.DeepEqual(p.desired.Object, obj.Object) {
			p.desired = obj
			plans[i] = p
			continue
		}
		rest = append(rest, obj)
	}
	return rest
}
