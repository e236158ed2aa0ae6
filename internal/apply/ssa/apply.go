package ssa

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
)

// ApplyOptions configures Apply.
type ApplyOptions struct {
	// FieldManager is the server-side apply field manager. Default
	// "kustomize-controller", the name Flux's tools look for.
	FieldManager string

	// Force deletes and recreates an object whose apply fails on an
	// immutable field (Kustomization spec.force). Objects annotated
	// kustomize.toolkit.fluxcd.io/force: Enabled, in the manifest or in the
	// cluster, are recreated without it.
	Force bool

	// Owner, when set, labels every applied object with the owning
	// Kustomization (kustomize.toolkit.fluxcd.io/name and /namespace).
	Owner *Owner

	// CustomStageKinds are applied in a stage of their own, after the
	// class kinds and before everything else (--custom-apply-stage-kinds).
	CustomStageKinds []schema.GroupKind

	// OverrideManagers are field managers, besides kubectl's and the
	// controller's own pre-SSA updates, whose fields Apply takes over so
	// that the manifest's values win and fields missing from it are
	// removed (--override-manager). Names match as prefixes, as in Flux.
	OverrideManagers []string

	// BeforeWrite, when set, is called once per stage, after the whole
	// stage was validated and before any of it is written, with the
	// objects the stage is about to create or change. An error stops Apply
	// before the stage writes anything. The Kustomization controller
	// records them in its inventory there, so that the inventory never
	// lags behind what is in the cluster, even if the process dies
	// halfway through a stage.
	BeforeWrite func(ctx context.Context, writes []ChangeSetEntry) error

	// IntendWrites, when set, is called once per stage as the stage's
	// validation starts, and runs concurrently with its reads and
	// dry-runs, with every object of the stage that may be written: all
	// but those an ssa.skip annotation of the manifest already skips
	// (Action empty: not known yet), none when it skips them all: every
	// stage with objects calls it. The stage writes nothing before it
	// returned and the whole stage was validated; its error stops the
	// stage before it writes, as BeforeWrite's does, and a stage whose
	// validation fails waits for it before Apply returns. BeforeWrite is
	// still called afterwards with what the stage does write, a subset.
	// The Kustomization controller records the stage in its inventory
	// there, so that the inventory's patch no longer waits for the
	// dry-runs and the writes no longer wait for the patch.
	IntendWrites func(ctx context.Context, objects []ChangeSetEntry) error

	// WaitTimeout bounds the wait for the definitions and classes applied
	// in the first stages to become ready, and for an object deleted to be
	// recreated to go away. Default DefaultWaitTimeout.
	WaitTimeout time.Duration

	// Memo, when set, lets Apply count an object unchanged without its
	// dry-run when its manifest is the one Apply last found in place and
	// the object has not been written since (see Memo). Apply updates it
	// and drops the objects that are no longer among its input.
	Memo *Memo

	// Live, when set with Memo, tells from a watch cache what an object
	// the Memo knows is now, so that one still holding its manifest is
	// counted unchanged without any request. An object Live does not
	// answer for, or answers for with another version, is read and
	// dry-run as usual.
	Live LiveReader

	// KeepWritten keeps in the ChangeSet the API server's answer to each
	// apply that created or changed an object (ChangeSet.Written): the
	// freshest state there is of it, which a health check's first look
	// reads instead of the object.
	KeepWritten bool

	// Early, when set, holds the plans EarlyPlans made while the objects
	// were being built, with these same options. Apply waits for it to
	// finish and takes its plans of objects it is given unchanged, until
	// a stage writes something.
	Early *EarlyPlans
}

// LiveReader answers what an object is now, as a watch cache holds it.
type LiveReader interface {
	// Live returns the object's uid, resourceVersion and AppliedDigest,
	// and false when the cache does not hold it (absent, kind not
	// watched).
	Live(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (LiveView, bool)
}

// LiveView is what a LiveReader tells of an object.
type LiveView struct {
	UID             types.UID
	ResourceVersion string
	// Applied is the object's AppliedDigest.
	Applied string
}

func (o ApplyOptions) withDefaults() ApplyOptions {
	if o.FieldManager == "" {
		o.FieldManager = meta.KustomizeControllerManager
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	return o
}

// Apply server-side applies objects in stages and reports what it did to
// each, in apply order. See the package documentation for the stages, the
// per-object annotations and how drift is detected.
//
// A stage is validated as a whole before any of it is written: every
// object is read and dry-run applied, and if one fails (invalid, immutable
// field without force, missing namespace...) nothing of the stage is
// written and Apply returns the error. On error the ChangeSet holds the
// entries of the stages completed before.
func (m *Manager) Apply(ctx context.Context, objects []*unstructured.Unstructured, opts ApplyOptions) (*ChangeSet, error) {
	opts = opts.withDefaults()
	desired, err := prepare(objects, opts.Owner)
	if err != nil {
		return &ChangeSet{}, err
	}
	if opts.Memo != nil {
		keep := make(map[ObjMetadata]bool, len(desired))
		for _, obj := range desired {
			keep[ObjMetadataOf(obj)] = true
		}
		opts.Memo.retain(keep)
	}
	custom := make(map[schema.GroupKind]bool, len(opts.CustomStageKinds))
	for _, gk := range opts.CustomStageKinds {
		custom[gk] = true
	}
	stages := make([][]*unstructured.Unstructured, stageCount)
	for _, obj := range desired {
		s := stageOf(obj.GroupVersionKind().GroupKind(), custom)
		stages[s] = append(stages[s], obj)
	}

	var early map[ObjMetadata]*plan
	if opts.Early != nil && len(desired) == 0 {
		opts.Early.finish()
	}
	cs := &ChangeSet{}
	for s, objs := range stages {
		if len(objs) == 0 {
			continue
		}
		// The intent of the first stage overlaps the early plans still
		// in flight as well as the stage's own dry-runs.
		intent := intend(ctx, objs, opts)
		if opts.Early != nil {
			early, opts.Early = opts.Early.finish(), nil
		}
		entries, err := m.applyStage(ctx, objs, opts, cs, early, intent)
		if err != nil {
			return cs, err
		}
		if wrote(entries) {
			early = nil // what the stages after answer may have changed
		}
		if stage(s) > stageClasses {
			continue
		}
		if err := m.Wait(ctx, (&ChangeSet{Entries: entries}).Objects(), opts.WaitTimeout); err != nil {
			return cs, err
		}
		m.waitMapped(ctx, objs, opts.WaitTimeout)
	}
	return cs, nil
}

// waitMapped waits, at most timeout, until the client's REST mapper knows
// the kind of each CustomResourceDefinition among objs. A definition is
// Established a moment before the API server's discovery lists its kind,
// and a dry-run of one of its objects in that moment failed with "no
// matches for kind". On timeout the next stage's dry-run says what is
// wrong, as before.
func (m *Manager) waitMapped(ctx context.Context, objs []*unstructured.Unstructured, timeout time.Duration) {
	var kinds []schema.GroupKind
	for _, obj := range objs {
		if obj.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			continue
		}
		group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
		if group != "" && kind != "" {
			kinds = append(kinds, schema.GroupKind{Group: group, Kind: kind})
		}
	}
	if len(kinds) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, m.pollInterval, true, func(context.Context) (bool, error) {
		for _, gk := range kinds {
			if _, err := m.client.RESTMapper().RESTMapping(gk); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
}

// prepare copies the objects (Apply never changes its input), checks that
// each names its apiVersion, kind and name once, drops the server-owned
// metadata a manifest must not carry, adds the owner labels and sorts the
// copies in apply order within their stage.
func prepare(objects []*unstructured.Unstructured, owner *Owner) ([]*unstructured.Unstructured, error) {
	seen := make(map[ObjMetadata]bool, len(objects))
	out := make([]*unstructured.Unstructured, 0, len(objects))
	for _, in := range objects {
		id := ObjMetadataOf(in)
		if in.GetAPIVersion() == "" || id.GroupKind.Kind == "" || id.Name == "" {
			return nil, fmt.Errorf("object %q has no apiVersion, kind or name", id)
		}
		if seen[id] {
			return nil, fmt.Errorf("%s appears more than once", id)
		}
		seen[id] = true
		obj := in.DeepCopy()
		obj.SetResourceVersion("")
		obj.SetUID("")
		obj.SetManagedFields(nil)
		if owner != nil {
			labels := obj.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			for k, v := range owner.Labels() {
				labels[k] = v
			}
			obj.SetLabels(labels)
		}
		out = append(out, obj)
	}
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int {
		return compareObjects(ObjMetadataOf(a), ObjMetadataOf(b))
	})
	return out, nil
}

// plan is what Apply decided for one object after reading it and dry-run
// applying it.
type plan struct {
	desired  *unstructured.Unstructured
	existing *unstructured.Unstructured // nil when the object is absent
	action   Action
	// recreate: an immutable field changed and force is on, so the object
	// is deleted before it is applied.
	recreate bool
	// cleanup is a JSON patch that takes over other managers' fields and
	// drops kubectl's annotation; nil when there is nothing to clean.
	cleanup []byte
	// digest is the manifest's digest for ApplyOptions.Memo; inPlace is
	// the object as the server last returned it with the manifest in
	// place (the dry-run of an unchanged object, the answer of the
	// apply), nil when unknown.
	digest  [sha256.Size]byte
	inPlace *unstructured.Unstructured
	// remembered: ApplyOptions.Live showed the Memo's entry still holds,
	// so the object was neither read nor dry-run and the entry stays.
	remembered bool
}

func (p *plan) entry() ChangeSetEntry {
	return ChangeSetEntry{
		ObjMetadata: ObjMetadataOf(p.desired),
		Version:     p.desired.GroupVersionKind().Version,
		Action:      p.action,
	}
}

// applyStage plans every object of the stage concurrently (but those
// early has a plan of), and only if all plans succeed writes the ones that
// change something; it adds the stage's entries to cs and returns them.
func (m *Manager) applyStage(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions,
	cs *ChangeSet, early map[ObjMetadata]*plan, intent func() error) ([]ChangeSetEntry, error) {
	plans, err := m.validate(ctx, objs, opts, early)
	if ierr := intent(); err == nil {
		err = ierr
	}
	if err != nil {
		return nil, err
	}
	if err := beforeWrite(ctx, plans, opts); err != nil {
		return nil, err
	}
	if err := m.write(ctx, plans, opts); err != nil {
		return nil, err
	}
	entries := make([]ChangeSetEntry, len(plans))
	for i, p := range plans {
		entries[i] = p.entry()
		switch {
		case p.remembered:
		case p.inPlace != nil:
			opts.Memo.record(entries[i].ObjMetadata, p.digest, viewOf(p.inPlace, opts))
		default:
			opts.Memo.forget(entries[i].ObjMetadata)
		}
		if opts.KeepWritten && p.inPlace != nil && (p.action == Created || p.action == Configured) {
			cs.keepWritten(entries[i].ObjMetadata, p.inPlace)
		}
	}
	cs.Entries = append(cs.Entries, entries...)
	return entries, nil
}

// validate plans every object of the stage concurrently, but those early
// has a plan of or the Memo remembers.
func (m *Manager) validate(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions,
	early map[ObjMetadata]*plan) ([]*plan, error) {
	plans, rest, err := remembered(ctx, objs, opts)
	if err != nil {
		return nil, err
	}
	rest = takeEarly(early, rest, objs, plans)
	listed := m.list(ctx, rest, opts.Owner)
	err = forEach(ctx, len(objs), m.concurrency, func(ctx context.Context, i int) error {
		if plans[i] != nil {
			return nil
		}
		p, err := m.plan(ctx, objs[i], listed.get(ObjMetadataOf(objs[i])), opts)
		plans[i] = p
		return err
	})
	return plans, err
}

// intend starts opts.IntendWrites with the objects of a stage that may be
// written and returns the function that waits for it (nil error when
// there is none).
func intend(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions) func() error {
	if opts.IntendWrites == nil {
		return func() error { return nil }
	}
	entries := make([]ChangeSetEntry, 0, len(objs))
	for _, obj := range objs {
		if !skip(obj, nil) {
			entries = append(entries, ChangeSetEntry{ObjMetadata: ObjMetadataOf(obj), Version: obj.GroupVersionKind().Version})
		}
	}
	done := make(chan error, 1)
	go func() { done <- opts.IntendWrites(ctx, entries) }()
	return func() error { return <-done }
}

// remembered returns a plan for each object of objs that ApplyOptions.Live
// shows still holding the manifest the Memo recorded (nil for the
// others), and the others.
func remembered(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions) ([]*plan, []*unstructured.Unstructured, error) {
	plans := make([]*plan, len(objs))
	if opts.Memo == nil || opts.Live == nil {
		return plans, objs, nil
	}
	var rest []*unstructured.Unstructured
	for i, obj := range objs {
		id := ObjMetadataOf(obj)
		if !opts.Memo.knows(id) || skip(obj, nil) {
			rest = append(rest, obj)
			continue
		}
		digest, err := manifestDigest(obj, opts)
		if err != nil {
			return nil, nil, err
		}
		v, ok := opts.Live.Live(ctx, obj.GroupVersionKind(), client.ObjectKeyFromObject(obj))
		if !ok || !opts.Memo.inPlace(id, digest, liveView{uid: v.UID, resourceVersion: v.ResourceVersion, applied: v.Applied}) {
			rest = append(rest, obj)
			continue
		}
		plans[i] = &plan{desired: obj, action: Unchanged, digest: digest, remembered: true}
	}
	return plans, rest, nil
}

// wrote reports whether a stage created or changed objects.
func wrote(entries []ChangeSetEntry) bool {
	for _, e := range entries {
		if e.Action == Created || e.Action == Configured {
			return true
		}
	}
	return false
}

// beforeWrite calls opts.BeforeWrite with the plans that write.
func beforeWrite(ctx context.Context, plans []*plan, opts ApplyOptions) error {
	if opts.BeforeWrite == nil {
		return nil
	}
	var writes []ChangeSetEntry
	for _, p := range plans {
		if p.action == Created || p.action == Configured {
			writes = append(writes, p.entry())
		}
	}
	if len(writes) == 0 {
		return nil
	}
	return opts.BeforeWrite(ctx, writes)
}

// plan reads obj's in-cluster state, applies the per-object annotations,
// and dry-runs the apply to learn whether the write would change anything.
//
// The read and the dry-run are two requests, and a controller may update
// the object in between (a Deployment's status and revision annotation
// move while it rolls out): the dry-run then differs from what was read
// although the apply changes nothing. A dry-run answers with the
// resourceVersion of the object it was computed on, so when that is not
// the version read, plan reads and dry-runs again.
//
// listed is what a list read of the object found, if it answered for it:
// it saves the read on the first attempt.
func (m *Manager) plan(ctx context.Context, obj *unstructured.Unstructured, listed lookup, opts ApplyOptions) (*plan, error) {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		p, dryRun, err := m.dryRun(ctx, obj, listed, opts)
		listed = lookup{}
		if err != nil || p.action != "" {
			return p, err
		}
		if attempt < attempts && dryRun.GetResourceVersion() != p.existing.GetResourceVersion() {
			continue
		}
		if !merged(obj, p.existing) {
			patch, err := cleanupPatch(p.existing, opts.FieldManager, opts.OverrideManagers)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ObjMetadataOf(obj), err)
			}
			p.cleanup = patch
		}
		p.action = Unchanged
		if p.cleanup != nil || drifted(p.existing, dryRun) {
			p.action = Configured
		} else if dryRun.GetResourceVersion() == p.existing.GetResourceVersion() {
			p.inPlace = p.existing
		}
		return p, nil
	}
}

// dryRun reads obj and dry-runs its apply. It returns a plan with its
// action set when the answer is already known (skipped, created,
// recreated), and otherwise the plan and the dry-run's result to compare.
//
// An object neither a list read nor the Memo knows of is dry-run before it
// is read (probe): a fan-out's objects and most of a first apply's do not
// exist yet, and the dry-run of an absent object says so itself, so the
// read of an object that is not there (a 404 per object) is never sent.
func (m *Manager) dryRun(ctx context.Context, obj *unstructured.Unstructured, listed lookup, opts ApplyOptions) (*plan, *unstructured.Unstructured, error) {
	id := ObjMetadataOf(obj)
	var probed *dryRunResult
	if !listed.known && !opts.Memo.knows(id) {
		if skip(obj, nil) {
			return &plan{desired: obj, action: Skipped}, nil, nil
		}
		probed = m.dryRunApply(ctx, obj, opts)
		if probed.absent() {
			p := &plan{desired: obj, action: Created}
			return p, probed.obj, p.setDigest(opts)
		}
	}
	p := &plan{desired: obj, existing: listed.obj}
	if !listed.known {
		existing, err := m.read(ctx, obj)
		if err != nil {
			return nil, nil, err
		}
		p.existing = existing
	}
	if skip(obj, p.existing) {
		p.action = Skipped
		return p, nil, nil
	}
	if err := p.setDigest(opts); err != nil {
		return nil, nil, err
	}
	if opts.Memo != nil && p.existing != nil && opts.Memo.inPlace(id, p.digest, viewOf(p.existing, opts)) {
		p.action, p.inPlace = Unchanged, p.existing
		return p, nil, nil
	}
	if probed == nil {
		probed = m.dryRunApply(ctx, obj, opts)
	}
	if err := probed.err; err != nil {
		if !isImmutable(err) || p.existing == nil {
			return nil, nil, fmt.Errorf("%s dry-run failed: %w", id, err)
		}
		if !forced(obj, p.existing, opts) {
			return nil, nil, newImmutableFieldError(id, err)
		}
		p.recreate, p.action = true, Created
		return p, nil, nil
	}
	if p.existing == nil {
		p.action = Created
	}
	return p, probed.obj, nil
}

// dryRunResult is the answer of one dry-run apply: the object the server
// computed, or the error.
type dryRunResult struct {
	obj *unstructured.Unstructured
	err error
}

// absent reports whether the dry-run computed a creation: the server
// answers the dry-run of an absent object with an object it never stored,
// which has no resourceVersion (TestDryRunOfAbsentObject).
func (d *dryRunResult) absent() bool {
	return d.err == nil && d.obj.GetResourceVersion() == ""
}

func (m *Manager) dryRunApply(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) *dryRunResult {
	dry := obj.DeepCopy()
	if err := m.apply(ctx, dry, opts.FieldManager, true); err != nil {
		return &dryRunResult{err: err}
	}
	return &dryRunResult{obj: dry}
}

// read returns obj as it is in the cluster, nil when it is absent.
func (m *Manager) read(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(obj.GroupVersionKind())
	switch err := m.client.Get(ctx, client.ObjectKeyFromObject(obj), existing); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: reading the object: %w", ObjMetadataOf(obj), err)
	}
	return existing, nil
}

// setDigest records the manifest's digest when Apply keeps a Memo.
func (p *plan) setDigest(opts ApplyOptions) error {
	if opts.Memo == nil {
		return nil
	}
	digest, err := manifestDigest(p.desired, opts)
	if err != nil {
		return err
	}
	p.digest = digest
	return nil
}

// write performs the writes of a stage in apply order: one run of objects
// of the same kind after the other, the objects of a run concurrently.
// Flux writes one object at a time; objects of one kind never depend on
// each other, so a run may overlap without changing what the cluster sees
// between kinds.
func (m *Manager) write(ctx context.Context, plans []*plan, opts ApplyOptions) error {
	var run []*plan
	flush := func() error {
		err := forEach(ctx, len(run), m.concurrency, func(ctx context.Context, i int) error {
			return m.execute(ctx, run[i], opts)
		})
		run = run[:0]
		return err
	}
	for _, p := range plans {
		if p.action == Unchanged || p.action == Skipped {
			continue
		}
		if len(run) > 0 && run[0].desired.GroupVersionKind().GroupKind() != p.desired.GroupVersionKind().GroupKind() {
			if err := flush(); err != nil {
				return err
			}
		}
		run = append(run, p)
	}
	return flush()
}

func (m *Manager) execute(ctx context.Context, p *plan, opts ApplyOptions) error {
	id := ObjMetadataOf(p.desired)
	switch {
	case p.recreate:
		if err := m.deleteAndWait(ctx, p.existing, opts.WaitTimeout); err != nil {
			return fmt.Errorf("%s: immutable field changed, recreating the object: %w", id, err)
		}
	case p.cleanup != nil:
		patch := client.RawPatch(types.JSONPatchType, p.cleanup)
		if err := m.client.Patch(ctx, p.existing.DeepCopy(), patch, client.FieldOwner(opts.FieldManager)); err != nil {
			return fmt.Errorf("%s: taking over fields from other field managers: %w", id, err)
		}
	}
	applied := p.desired.DeepCopy()
	if err := m.apply(ctx, applied, opts.FieldManager, false); err != nil {
		return fmt.Errorf("%s apply failed: %w", id, err)
	}
	p.inPlace = applied
	return nil
}

// apply server-side applies obj with force, as Flux does: the manifest is
// the source of truth, so conflicts with other managers over fields it
// sets are resolved in its favour. The server's answer replaces obj.
func (m *Manager) apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string, dryRun bool) error {
	opts := []client.ApplyOption{client.ForceOwnership, client.FieldOwner(fieldManager)}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return m.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)
}

// deleteAndWait deletes obj, unless it was already replaced, and waits
// until it is gone, so that the apply after it creates a new object.
func (m *Manager) deleteAndWait(ctx context.Context, obj *unstructured.Unstructured, timeout time.Duration) error {
	uid := obj.GetUID()
	err := m.client.Delete(ctx, obj.DeepCopy(),
		client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, m.pollInterval, true, func(ctx context.Context) (bool, error) {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(obj.GroupVersionKind())
		err := m.client.Get(ctx, client.ObjectKeyFromObject(obj), cur)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && cur.GetUID() != uid, err
	})
}
