package artifactgenerator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/api/meta"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/generate"
)

// Messages of Flux's source-watcher.
const (
	msgInProgress = "Reconciliation in progress"
	msgDisabled   = "Reconciliation is disabled"
)

// Reconciler reconciles ArtifactGenerator objects.
type Reconciler struct {
	source.Deps
	// Fetcher downloads the sources' artifacts (--http-retry and the
	// size bounds).
	Fetcher *artifact.Fetcher
	// Build bounds each generated artifact.
	Build generate.Options
	// NoCrossNamespaceRefs is --no-cross-namespace-refs: a source in
	// another namespace stalls the generator with AccessDenied.
	NoCrossNamespaceRefs bool
	// RequeueDependency is --requeue-dependency: how soon a generator
	// whose source has no artifact yet looks again.
	RequeueDependency time.Duration
	// TempDir holds each run's scratch directory; os.TempDir when empty.
	TempDir string

	// paused remembers, by namespace/name, the resourceVersion of each
	// disabled generator whose ReconciliationDisabled event is recorded,
	// so that a source's new artifact waking it up records no second one.
	paused sync.Map
}

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.Run(ctx, r.Driver(), req, &sourceextensionsv1beta1.ArtifactGenerator{}, r.kind(ctx))
}

// kind is the ArtifactGenerator as the skeleton runs it for one request.
func (r *Reconciler) kind(ctx context.Context) reconcile.Kind[*sourceextensionsv1beta1.ArtifactGenerator, *outcome] {
	return reconcile.Kind[*sourceextensionsv1beta1.ArtifactGenerator, *outcome]{
		Name:       sourceextensionsv1beta1.ArtifactGeneratorKind,
		Conditions: conditionTypes,
		Finalizer:  sourceextensionsv1beta1.Finalizer,
		Suspended: func(obj *sourceextensionsv1beta1.ArtifactGenerator) bool {
			return r.disabled(ctx, obj)
		},
		Finalize: r.finalize,
		Begin: func(context.Context, *sourceextensionsv1beta1.ArtifactGenerator) *outcome {
			return &outcome{}
		},
		Phases: []reconcile.Phase[*sourceextensionsv1beta1.ArtifactGenerator, *outcome]{
			r.validate, r.observe, r.detectDrift, r.fetch, r.build, r.collect,
		},
		Status: applyStatus,
		Events: r.recordEvents,
	}
}

// outcome is what the phases observed and share; applyStatus turns it into
// status.
type outcome struct {
	// sources are the observed sources by alias, and digest their
	// digest (status.observedSourcesDigest).
	sources map[string]observedSource
	digest  string
	// upToDate is true when nothing drifted: the run ends without a build.
	upToDate bool
	// drift says why a build was needed (for the log).
	drift string
	// work is the run's scratch directory, dirs the fetched sources in it.
	work string
	dirs generate.Sources
	// inventory lists the ExternalArtifacts this run generated, and
	// changed the ones whose artifact is new.
	inventory []sourceextensionsv1beta1.ExternalArtifactReference
	changed   []changedArtifact
	// failedArtifact names the artifact whose build or apply failed.
	failedArtifact string
	failedStep     string
}

// changedArtifact is a generated ExternalArtifact with a new artifact.
type changedArtifact struct {
	namespace, name, revision string
}

// disabled reports the source.extensions.fluxcd.io/reconcile: disabled
// annotation, source-watcher's suspend, and records source-watcher's
// Warning event (ReconciliationDisabled, "Reconciliation is disabled")
// once per version of the object: source-watcher records it on every
// reconcile, which a paused generator gets for each new artifact of its
// sources too.
func (r *Reconciler) disabled(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator) bool {
	key := obj.Namespace + "/" + obj.Name
	if !obj.IsDisabled() {
		r.paused.Delete(key)
		return false
	}
	ctrl.LoggerFrom(ctx).Info(msgDisabled)
	if prev, seen := r.paused.Swap(key, obj.ResourceVersion); (!seen || prev != obj.ResourceVersion) && r.Events != nil {
		r.Events.Warning(ctx, obj, sourceextensionsv1beta1.ReconciliationDisabledReason, nil, "%s", msgDisabled)
	}
	return true
}

// validate checks what the schema cannot; a spec that cannot work stalls.
func (r *Reconciler) validate(_ context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, _ *outcome) error {
	if err := generate.Validate(&obj.Spec); err != nil {
		return &errs.Stalling{Err: err, Reason: sourceextensionsv1beta1.ValidationFailedReason}
	}
	if !r.NoCrossNamespaceRefs {
		return nil
	}
	for _, s := range obj.Spec.Sources {
		if s.Namespace != "" && s.Namespace != obj.Namespace {
			return &errs.Stalling{
				Err:    fmt.Errorf("cross-namespace reference to source %s/%s/%s is not allowed", s.Kind, s.Namespace, s.Name),
				Reason: sourceextensionsv1beta1.AccessDeniedReason,
			}
		}
	}
	return nil
}

// detectDrift ends the run when the last build still stands; otherwise it
// shows the run as in progress.
func (r *Reconciler) detectDrift(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, out *outcome) error {
	drift, err := r.drift(ctx, obj, out.digest)
	if err != nil {
		return err
	}
	if drift == "" {
		out.upToDate = true
		return reconcile.Stop
	}
	out.drift = drift
	ctrl.LoggerFrom(ctx).Info(msgInProgress, "reason", drift)
	return reconcile.ProgressUnknown(ctx, obj, "%s", msgInProgress)
}

// fetch downloads every source's artifact into the run's scratch
// directory, one subdirectory per alias.
func (r *Reconciler) fetch(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, out *outcome) error {
	work, err := os.MkdirTemp(r.TempDir, fmt.Sprintf("ag-%s-%s-", obj.Namespace, obj.Name))
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to create tmp dir: %w", err), Reason: meta.ReconciliationFailedReason}
	}
	dirs, err := r.fetchSources(ctx, out.sources, work)
	if err != nil {
		_ = os.RemoveAll(work)
		return &errs.Waiting{
			Err:          fmt.Errorf("fetch sources failed: %w", err),
			Reason:       sourceextensionsv1beta1.SourceFetchFailedReason,
			RequeueAfter: r.RequeueDependency,
		}
	}
	out.work, out.dirs = work, dirs
	return nil
}

// build expands the spec against the fetched sources, builds and stores
// every artifact and applies its ExternalArtifact.
func (r *Reconciler) build(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, out *outcome) error {
	defer func() { _ = os.RemoveAll(out.work) }()
	arts, err := generate.Expand(&obj.Spec, out.dirs)
	if err != nil {
		return &errs.Stalling{Err: err, Reason: meta.BuildFailedReason}
	}
	for _, a := range arts {
		stored, err := r.store(ctx, obj, a, out)
		if err != nil {
			out.failedArtifact, out.failedStep = a.Name, "build"
			return buildError(err)
		}
		ref, changed, err := r.applyExternalArtifact(ctx, obj, a, stored)
		if err != nil {
			out.failedArtifact, out.failedStep = a.Name, "reconcile"
			return &errs.Generic{Err: err, Reason: meta.ReconciliationFailedReason}
		}
		out.inventory = append(out.inventory, ref)
		if changed {
			out.changed = append(out.changed, changedArtifact{namespace: obj.Namespace, name: a.Name, revision: stored.Revision})
		}
	}
	return nil
}

// buildError stalls on what another try cannot fix (the spec, a hostile
// source, an artifact over its bounds) and retries the rest.
func buildError(err error) error {
	if errors.Is(err, generate.ErrInvalidSpec) || errors.Is(err, generate.ErrUnsafeSource) || errors.Is(err, generate.ErrTooLarge) {
		return &errs.Stalling{Err: err, Reason: meta.BuildFailedReason}
	}
	return &errs.Generic{Err: err, Reason: meta.BuildFailedReason}
}

// collect deletes the ExternalArtifacts the spec no longer produces, with
// their files, and old files of the ones it does.
func (r *Reconciler) collect(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, out *outcome) error {
	current := map[string]bool{}
	for _, ref := range out.inventory {
		current[ref.Namespace+"/"+ref.Name] = true
	}
	var orphans []sourceextensionsv1beta1.ExternalArtifactReference
	for _, ref := range obj.Status.Inventory {
		if !current[ref.Namespace+"/"+ref.Name] {
			orphans = append(orphans, ref)
		}
	}
	if err := r.deleteExternalArtifacts(ctx, orphans); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "garbage collection of ExternalArtifacts failed")
	}
	r.collectFiles(ctx, out.inventory)
	return nil
}
