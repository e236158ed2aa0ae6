package kustomization

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/healthwatch"
	"github.com/weir-gitops/weir/internal/apply/inventory"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/applymemo"
	"github.com/weir-gitops/weir/internal/kustomize/buildcache"
	"github.com/weir-gitops/weir/internal/kustomize/render"
	"github.com/weir-gitops/weir/internal/kustomize/sharedtree"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// ControllerName is the field manager and event source, as in Flux.
const ControllerName = "kustomize-controller"

// Reconciler reconciles Kustomization objects.
type Reconciler struct {
	// Client is the manager's (cached) client: Kustomizations and sources.
	Client client.Client
	// APIReader reads uncached: dependencies (fresh status), ConfigMaps and
	// Secrets (never held in a cluster-wide cache).
	APIReader client.Reader
	// Clients builds the clients that apply: the controller's own, one
	// impersonating a service account, or one for a remote cluster.
	Clients *ClientFactory
	Events  *events.Recorder
	Metrics *metrics.Recorder
	// Fetcher downloads artifacts; a default Fetcher when nil.
	Fetcher *artifact.Fetcher
	Options Options
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Health follows the objects of parked health checks through watches;
	// nil polls them at Options.HealthPollInterval.
	Health *healthwatch.Watcher
	// Identity is the cloud identity SOPS decryption presents to key
	// services (internal/auth): the ObjectLevelWorkloadIdentity gate,
	// --default-decryption-service-account, the token cache. Nil is the
	// gate off.
	Identity *auth.Settings

	cacheOnce sync.Once
	cache     *buildcache.Cache
	waitsOnce sync.Once
	waits     healthWaits
	// written is the version each Kustomization's last run left it at
	// (reconcile.Written).
	written reconcile.Written
	memos   applymemo.Memos
	store   *applymemo.Store
	trees   sharedtree.Trees
	// holdFor, when set, replaces progressAfter (hold.go) for the
	// Kustomizations it gives a positive hold: a test's.
	holdFor func(*kustomizev1.Kustomization) time.Duration
}

// Options are the controller's flags and feature gates.
type Options struct {
	// RequeueDependency is --requeue-dependency: how soon a Kustomization
	// waiting for a dependency or an artifact looks again, as a safety net
	// behind the watches.
	RequeueDependency time.Duration
	// NoCrossNamespaceRefs is --no-cross-namespace-refs.
	NoCrossNamespaceRefs bool
	// NoRemoteBases is --no-remote-bases.
	NoRemoteBases bool
	// ConcurrentSSA is --concurrent-ssa.
	ConcurrentSSA int
	// Jitter is --interval-jitter-percentage.
	Jitter float64
	// OverrideManagers is --override-manager.
	OverrideManagers []string
	// CustomStageKinds is --custom-apply-stage-kinds.
	CustomStageKinds []schema.GroupKind
	// AllowExternalArtifact is the ExternalArtifact feature gate.
	AllowExternalArtifact bool
	// AdditiveCELDependencyCheck is the feature gate of that name: a
	// readyExpr adds to the built-in dependency check instead of replacing
	// it.
	AdditiveCELDependencyCheck bool
	// AllowUndefinedVariables turns strict substitution off
	// (StrictPostBuildSubstitutions=false).
	AllowUndefinedVariables bool
	// DisableFailFast is the DisableFailFastBehavior feature gate.
	DisableFailFast bool
	// HealthPollInterval is how often health checks read the objects;
	// ssa's default when zero.
	HealthPollInterval time.Duration
	// BuildCacheObjects bounds the build cache (DefaultBuildCacheObjects
	// when zero); negative turns it off.
	BuildCacheObjects int
	// ConfigsSelector is --watch-configs-label-selector: a change to a
	// ConfigMap or Secret it matches queues the Kustomizations that read it
	// (substituteFrom, decryption). Nil watches none.
	ConfigsSelector labels.Selector
	// FollowProducedConfigs queues the Kustomizations that read a
	// ConfigMap or Secret another Kustomization applied when it changes,
	// without a label (followers.go); off with DisableConfigWatchers.
	FollowProducedConfigs bool
	// WatchNamespace restricts FollowProducedConfigs's watch to one
	// namespace (--watch-all-namespaces=false); all when empty.
	WatchNamespace string
	// MemoNamespace and MemoName name the Secrets that keep the apply
	// memo across restarts (applymemo.Store): MemoName-0, MemoName-1, … in
	// MemoNamespace. In memory only when either is empty.
	MemoNamespace string
	MemoName      string
	// SOPSAgeSecret is --sops-age-secret, in the controller's namespace:
	// its age keys decrypt for a Kustomization whose spec.decryption
	// names no Secret. Nil when unset.
	SOPSAgeSecret *types.NamespacedName
	// SOPSVaultConfigMap is --sops-vault-configmap, in the controller's
	// namespace: the Vault/OpenBao instances SOPS decryption logs in to
	// with a ServiceAccount token (render.Options.SOPSVaultConfigMap).
	// Nil when unset.
	SOPSVaultConfigMap *types.NamespacedName
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) driver() reconcile.Driver {
	return reconcile.Driver{Client: r.Client, Metrics: r.Metrics, Jitter: r.Options.Jitter, Now: r.Now,
		Written: &r.written, Reader: r.APIReader}
}

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with
// this kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.store.Wait(ctx)
	return reconcile.Run(ctx, r.driver(), req, &kustomizev1.Kustomization{}, r.kind())
}

// conditionTypes are the conditions a Kustomization carries, as
// kustomize-controller writes them. None is removed on every success:
// Healthy goes only when no health check ran (applyStatus).
var conditionTypes = reconcile.Conditions{
	Owned: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition, meta.HealthyCondition},
}

// kind is the Kustomization as the skeleton runs it. The deadline of
// spec.timeout is the phase's own (deadline.go: it starts after the
// dependencies and a parked health check), so Timeout stays unset.
func (r *Reconciler) kind() reconcile.Kind[*kustomizev1.Kustomization, *outcome] {
	return reconcile.Kind[*kustomizev1.Kustomization, *outcome]{
		Name:       kustomizev1.KustomizationKind,
		Conditions: conditionTypes,
		Suspended:  func(obj *kustomizev1.Kustomization) bool { return obj.Spec.Suspend },
		Finalize:   r.finalize,
		Begin:      r.begin,
		Phases:     []reconcile.Phase[*kustomizev1.Kustomization, *outcome]{r.reconcile},
		Status:     r.status,
		Events:     r.events,
	}
}

// begin starts the record of a run with the time it starts and the status
// it starts from, which the quiet ending compares against (quiet.go).
func (r *Reconciler) begin(_ context.Context, obj *kustomizev1.Kustomization) *outcome {
	return &outcome{begin: beginning{at: r.now(), status: obj.Status.DeepCopy(), healthy: isHealthy(obj)}}
}

// status is the run's one ending, decided here once: a quiet run that
// changed nothing leaves the status as it found it (quietEnd), any other
// run writes it from the phases' results (applyStatus); events follows
// the same decision. A quiet end only ever follows a success, so the
// queue hears nil for it as before.
func (r *Reconciler) status(obj *kustomizev1.Kustomization, out *outcome, err error) {
	now := r.now()
	out.end = ending{quiet: quietEnd(obj, out.begin.status, out, err), took: out.took(now)}
	if !out.end.quiet {
		applyStatus(obj, out, err, now, out.end.took)
	}
}

// events is the one ending's events, after status: the notification
// controller alone hears of a quiet end (recordQuietEnd), people of any
// other (recordEvents).
func (r *Reconciler) events(ctx context.Context, obj *kustomizev1.Kustomization, out *outcome, err error) {
	if out.end.quiet {
		r.recordQuietEnd(ctx, obj, out, out.end.took)
		return
	}
	r.recordEvents(ctx, obj, out, err, out.end.took)
}

// reconcile runs the steps of a Kustomization in order and stops at the
// first error: the skeleton's one phase (not yet split into several).
func (r *Reconciler) reconcile(ctx context.Context, obj *kustomizev1.Kustomization, out *outcome) (err error) {
	checks, err := r.compileHealthChecks(obj)
	if err != nil {
		return err
	}
	if err := r.checkDecryptionIdentity(obj); err != nil {
		return err
	}
	src, err := r.getSource(ctx, obj)
	if err != nil {
		return err
	}
	a := src.GetArtifact()
	if a == nil {
		return &errs.Waiting{
			Err:          fmt.Errorf("Source artifact not found, retrying in %s", r.Options.RequeueDependency), //nolint:staticcheck // Flux's message
			Reason:       meta.ArtifactFailedReason,
			RequeueAfter: r.Options.RequeueDependency,
		}
	}
	out.source = sourceResult{revision: a.Revision, originRevision: a.Metadata[originRevisionKey]}

	// A parked health check resumes before the dependencies are read: its
	// apply passed their gate for this generation and revision, and a
	// dependency that has begun a run of its own since (Ready Unknown)
	// must not turn a dependent waiting for its objects into one waiting
	// for the dependency, throwing the wait away.
	if w := r.resumable(obj, out.source.revision); w != nil {
		out.build = buildResult{attempted: true, checksum: w.Carry().checksum}
		out.health, err = r.resumeHealth(ctx, obj, w)
		return err
	}
	if len(obj.Spec.DependsOn) > 0 {
		if err := r.checkDependencies(ctx, obj, src); err != nil {
			return err
		}
	}

	out.progress = progress{quiet: steady(obj, out.source), begun: r.now()}
	// A phase still held back when the run ends is never written: the
	// final status replaces it (docs/design/0043-coalesced-progress-writes.md).
	defer func() {
		if releaseErr := r.release(obj, &out.progress); releaseErr != nil {
			err = errors.Join(err, releaseErr)
		}
	}()
	if err := r.progress(ctx, obj, &out.progress, out.source.revision, "Fetching manifests"); err != nil {
		return err
	}
	ctx, cancel := withDeadline(ctx, obj)
	defer cancel()
	kube, err := r.Clients.For(ctx, obj)
	if err != nil {
		return r.retry(obj, meta.ReconciliationFailedReason, err)
	}
	early := &earlyApply{ctx: ctx, mgr: r.newManager(kube), options: func() ssa.ApplyOptions { return r.applyOptions(obj, &out.progress) }}
	defer early.stop()
	objects, err := r.fetchAndBuild(ctx, obj, a, out, early.runs)
	if err != nil {
		return err
	}
	if out.apply, err = r.apply(ctx, obj, early.mgr, early.applyOptions(), objects, out); err != nil {
		return err
	}
	out.health, err = r.checkHealth(ctx, obj, early.mgr, checks, out)
	return err
}

// fetchAndBuild returns the objects to apply: from the build cache when
// nothing the build reads has changed, else by downloading the artifact
// and building it. Its result goes to out.build.
//
// runs, when not nil, hears of the runs of a split build as they are
// built (kustomize.BuildOptions.Runs).
func (r *Reconciler) fetchAndBuild(ctx context.Context, obj *kustomizev1.Kustomization, a *meta.Artifact, out *outcome,
	runs func([]schema.GroupKind) func([]*unstructured.Unstructured)) ([]*unstructured.Unstructured, error) {
	cache := r.builds()
	name := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	opts := r.renderOptions()
	key := ""
	// vars, read once for the key, are the ones the build substitutes.
	var vars map[string]string
	if obj.Spec.Decryption == nil {
		if obj.Spec.PostBuild != nil {
			v, err := render.Variables(ctx, r.APIReader, obj)
			if err != nil {
				return nil, r.retry(obj, meta.BuildFailedReason, err)
			}
			vars = v
		}
		var err error
		if key, err = buildcache.Key(a.Digest, &obj.Spec, vars, opts); err != nil {
			return nil, r.retry(obj, meta.BuildFailedReason, err)
		}
		if res, ok := cache.Get(name, key); ok {
			out.build = buildResult{attempted: true, checksum: res.Checksum}
			return res.Objects, nil
		}
	}

	src, release, err := r.fetch(ctx, obj, a)
	if err != nil {
		return nil, err
	}
	defer release()
	out.build.attempted = true
	obj.Status.LastAttemptedRevision = out.source.revision
	if err := r.progress(ctx, obj, &out.progress, out.source.revision, "Building manifests"); err != nil {
		return nil, err
	}
	res, err := r.build(ctx, obj, src, vars, runs)
	if err != nil {
		return nil, err
	}
	out.build.checksum = res.Checksum
	if key != "" {
		cache.Put(name, key, res)
	}
	return res.Objects, nil
}

// DefaultBuildCacheObjects bounds the objects the build cache holds, over
// all Kustomizations (buildcache.DefaultObjects).
const DefaultBuildCacheObjects = buildcache.DefaultObjects

// builds returns the build cache (internal/kustomize/buildcache), made on
// first use. Every use goes through it: the reconcile that builds one
// Kustomization and the finalizer of another run on different workers,
// and only the Once orders them.
func (r *Reconciler) builds() *buildcache.Cache {
	r.cacheOnce.Do(func() { r.cache = buildcache.New(r.Options.BuildCacheObjects) })
	return r.cache
}

func (r *Reconciler) renderOptions() render.Options {
	return render.Options{
		NoRemoteBases:           r.Options.NoRemoteBases,
		AllowUndefinedVariables: r.Options.AllowUndefinedVariables,
		Identity:                r.Identity,
		SOPSAgeSecret:           r.Options.SOPSAgeSecret,
		SOPSVaultConfigMap:      r.Options.SOPSVaultConfigMap,
	}
}

// fetch returns the artifact, in memory or extracted in a directory
// (shared with the other builds of it, internal/kustomize/sharedtree), and the
// function that gives it back, and checks spec.path.
func (r *Reconciler) fetch(ctx context.Context, obj *kustomizev1.Kustomization, a *meta.Artifact) (sharedtree.Source, func(), error) {
	fetcher := r.Fetcher
	if fetcher == nil {
		fetcher = &artifact.Fetcher{}
	}
	src, release, err := r.trees.Acquire(ctx, a.Digest, func(mkdir func() (string, error)) (*artifact.Tree, error) {
		tree, _, err := fetcher.FetchTree(ctx, a.URL, a.Digest, mkdir)
		return tree, err
	})
	switch {
	case errors.Is(err, sharedtree.ErrTmpDir):
		return sharedtree.Source{}, nil, r.retry(obj, meta.ReconciliationFailedReason, err)
	case errors.Is(err, artifact.ErrArtifactNotFound):
		return sharedtree.Source{}, nil, &errs.Waiting{
			Err:          fmt.Errorf("Source is not ready, artifact not found, retrying in %s", r.Options.RequeueDependency), //nolint:staticcheck // Flux's message
			Reason:       meta.ArtifactFailedReason,
			RequeueAfter: r.Options.RequeueDependency,
		}
	case err != nil:
		return sharedtree.Source{}, nil, r.retry(obj, meta.ArtifactFailedReason, err)
	}
	// An unsafe path (absolute, climbing out) is left to the build, which
	// refuses it without touching the disk.
	if rel := filepath.FromSlash(trimDotSlash(obj.Spec.Path)); filepath.IsLocal(rel) {
		if err := relativeTo(src.Stat(rel), src.Dir); err != nil {
			release()
			return sharedtree.Source{}, nil, r.retry(obj, meta.ArtifactFailedReason, fmt.Errorf("kustomization path not found: %w", err))
		}
	}
	return src, release, nil
}

// build renders the objects to apply with render.Kustomization, reading ConfigMaps and
// Secrets uncached; vars, when not nil, are spec.postBuild's variables
// already read (render.Options.Variables).
func (r *Reconciler) build(ctx context.Context, obj *kustomizev1.Kustomization, src sharedtree.Source, vars map[string]string,
	runs func([]schema.GroupKind) func([]*unstructured.Unstructured)) (*kustomize.Result, error) {
	opts := r.renderOptions()
	opts.Runs = runs
	opts.Variables = vars
	if src.Mem != nil {
		opts.Tree = src.Mem
	}
	res, err := render.Kustomization(ctx, r.APIReader, obj, src.Dir, opts)
	if err != nil {
		reason := meta.BuildFailedReason
		if errors.Is(err, kustomize.ErrDecryptionRequired) {
			// Flux finds this at apply time and reports it so.
			reason = meta.ReconciliationFailedReason
		}
		return nil, r.retry(obj, reason, relativeTo(err, src.Dir))
	}
	return res, nil
}

// recordWrites adds what an apply stage is about to write to
// status.inventory and patches it before the stage writes, so that the
// inventory never lags behind the cluster: if the controller dies in the
// middle of the stage, deleting the Kustomization still prunes all it
// created. Objects planned but never created are NotFound to that prune,
// which counts them deleted; prune deletes only objects labelled as this
// Kustomization's. It is ssa.ApplyOptions.BeforeWrite, and remembers the
// writes in p for forgetIntent.
func (r *Reconciler) recordWrites(obj *kustomizev1.Kustomization, p *progress) func(context.Context, []ssa.ChangeSetEntry) error {
	return func(ctx context.Context, writes []ssa.ChangeSetEntry) error {
		p.written = append(p.written, writes...)
		_, err := r.record(ctx, obj, p, writes)
		return err
	}
}

// recordIntent is ssa.ApplyOptions.IntendWrites: it records every object
// a stage may write, as recordWrites does, while the stage is still
// dry-run, so that the patch of a large inventory (a 1,500-object stage
// makes it 130 KB) no longer sits between the dry-runs and the writes.
// recordWrites then finds nothing to add. A stage that fails, or writes
// fewer objects, leaves objects in the inventory that were never written:
// forgetIntent takes them out again in the run's final status
// (docs/design/0020-large-and-idle-fleets.md, decision 7).
//
// The first stage's call also begins the "Detecting drift" phase that
// apply left to it (p.detecting), in the same status patch: a first
// apply sends one patch for both where it sent two. Without that patch
// the phase is held back as any other
// (docs/design/0043-coalesced-progress-writes.md), never the inventory:
// when the intent grew it, the patch goes out, and carries the phase.
func (r *Reconciler) recordIntent(obj *kustomizev1.Kustomization, p *progress) func(context.Context, []ssa.ChangeSetEntry) error {
	return func(ctx context.Context, objects []ssa.ChangeSetEntry) error {
		msg := p.detecting
		p.detecting = ""
		grew := mergeInventory(obj, objects)
		p.intended = p.intended || grew
		switch {
		case msg != "" && !grew:
			return r.progressMessage(ctx, obj, p, msg)
		case msg != "":
			conditions.MarkReconciling(obj, meta.ProgressingReason, "%s", msg)
			return r.patch(ctx, obj, p)
		case grew:
			return r.patch(ctx, obj, p)
		}
		return nil
	}
}

// record merges entries into status.inventory and patches it when that
// added any; it reports whether it did.
func (r *Reconciler) record(ctx context.Context, obj *kustomizev1.Kustomization, p *progress, entries []ssa.ChangeSetEntry) (bool, error) {
	if !mergeInventory(obj, entries) {
		return false, nil
	}
	return true, r.patch(ctx, obj, p)
}

// mergeInventory adds entries to status.inventory and reports whether any
// was new.
func mergeInventory(obj *kustomizev1.Kustomization, entries []ssa.ChangeSetEntry) bool {
	current := kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{}}
	if obj.Status.Inventory != nil {
		current = *obj.Status.Inventory
	}
	merged, grew := inventory.Merge(current, entries)
	if grew {
		obj.Status.Inventory = &merged
	}
	return grew
}

// forgetIntent, after a failed apply, sets status.inventory back to what
// it was (old, nil when there was none) with what the apply did write, as
// recordWrites alone would have left it: the objects recordIntent added
// but no stage wrote leave it with the run's final status patch.
func forgetIntent(obj *kustomizev1.Kustomization, old *kustomizev1.ResourceInventory, p *progress) {
	if !p.intended {
		return
	}
	if old == nil && len(p.written) == 0 {
		obj.Status.Inventory = nil
		return
	}
	base := kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{}}
	if old != nil {
		base = *old
	}
	inv, _ := inventory.Merge(base, p.written)
	obj.Status.Inventory = &inv
}

// applyOptions are the options obj's objects are applied with.
func (r *Reconciler) applyOptions(obj *kustomizev1.Kustomization, p *progress) ssa.ApplyOptions {
	return ssa.ApplyOptions{
		FieldManager:     ControllerName,
		Force:            obj.Spec.Force,
		Owner:            &ssa.Owner{Name: obj.Name, Namespace: obj.Namespace},
		CustomStageKinds: r.Options.CustomStageKinds,
		OverrideManagers: r.Options.OverrideManagers,
		BeforeWrite:      r.recordWrites(obj, p),
		IntendWrites:     r.recordIntent(obj, p),
		Memo:             r.memos.Of(obj),
		Live:             r.live(obj),
		// The health check's first look reads the answers (internal/apply/parked).
		KeepWritten: obj.Spec.Wait || len(obj.Spec.HealthChecks) > 0,
	}
}

// apply applies and records the inventory, then prunes: the apply
// phase, whose result it returns, also when it fails part-way.
func (r *Reconciler) apply(ctx context.Context, obj *kustomizev1.Kustomization, mgr *ssa.Manager, opts ssa.ApplyOptions,
	objects []*unstructured.Unstructured, out *outcome) (applyResult, error) {
	var res applyResult
	p := &out.progress
	oldInventory := obj.Status.Inventory.DeepCopy()
	old := kustomizev1.ResourceInventory{}
	if oldInventory != nil {
		old = *oldInventory.DeepCopy()
	}
	// With objects to apply, the first stage's intent reports the phase
	// (recordIntent); Apply calls it for every stage it validates.
	detecting := progressText(obj, out.source.revision, "Detecting drift")
	if len(objects) == 0 || opts.IntendWrites == nil {
		if err := r.progressMessage(ctx, obj, p, detecting); err != nil {
			return res, err
		}
	} else {
		p.detecting = detecting
	}
	cs, err := mgr.Apply(ctx, objects, opts)
	res.applied = cs
	if err != nil {
		forgetIntent(obj, oldInventory, p)
		if cs != nil {
			if changes := cs.Changes(); changes != "" {
				err = fmt.Errorf("%w\n%s", err, changes)
			}
		}
		return res, r.retry(obj, meta.ReconciliationFailedReason, err)
	}
	inv := inventory.New(cs)
	res.inventory = &inv
	if !obj.Spec.Prune {
		return res, nil
	}
	stale, err := inventory.Diff(old, inv, cs.Skipped()...)
	if err != nil {
		return res, r.retry(obj, meta.PruneFailedReason, err)
	}
	if len(stale) > 0 {
		res.pruned, err = mgr.Prune(ctx, stale, ssa.PruneOptions{Owner: opts.Owner})
		if err != nil {
			return res, r.retry(obj, meta.PruneFailedReason, err)
		}
	}
	return res, nil
}

// retry wraps a phase failure: Ready=False with reason, retried after
// spec.retryInterval as Flux does.
func (r *Reconciler) retry(obj *kustomizev1.Kustomization, reason string, err error) error {
	if errs.IsStalling(err) {
		return err // the spec cannot work: no retry
	}
	return &errs.Generic{Err: err, Reason: reason, RetryAfter: obj.GetRetryInterval()}
}

// originRevisionKey is the artifact metadata key holding the revision an
// OCI artifact was built from.
const originRevisionKey = "org.opencontainers.image.revision"

func trimDotSlash(p string) string {
	for len(p) >= 2 && p[:2] == "./" {
		p = p[2:]
	}
	if p == "" {
		return "."
	}
	return p
}

// relativeTo rewrites the temporary directory out of an error message, so
// messages name paths as the user wrote them and stay the same from one run
// to the next. The original error stays reachable with errors.Is/As.
func relativeTo(err error, dir string) error {
	if err == nil || dir == "" {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	msg = strings.ReplaceAll(msg, dir, ".")
	if msg == err.Error() {
		return err
	}
	return &rewordedError{msg: msg, err: err}
}

type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }
