package source

import (
	"context"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// Observed is what a source's status says it last handled.
type Observed interface {
	reconcile.Object
	GetArtifact() *meta.Artifact
}

// Begin marks a source reconcile as under way, with source-controller's
// messages, when there is news to show: a new generation (Reconciling=True
// and Ready=Unknown, "processing object: new generation X -> Y") or a
// reconcile request not handled yet ("reconciliation in progress"). The
// status is patched at once. A periodic run leaves the conditions alone,
// so one that changes nothing writes nothing (source-controller flips
// Ready in memory and back, which moves its lastTransitionTime).
func Begin(ctx context.Context, obj Observed, observedGeneration int64, lastHandled string) error {
	token, requested := meta.ReconcileAnnotationValue(obj.GetAnnotations())
	switch {
	case obj.GetGeneration() != observedGeneration:
		return reconcile.ProgressUnknown(ctx, obj, "processing object: new generation %d -> %d", observedGeneration, obj.GetGeneration())
	case requested && token != lastHandled:
		return reconcile.ProgressUnknown(ctx, obj, "reconciliation in progress")
	}
	return nil
}

// Building reports, before a source downloads revision to store it, that
// a new artifact is being built: "building artifact" when there is none
// yet (Ready Unknown), "building artifact: new upstream revision '…'" when
// revision replaces the stored one (Ready kept).
func Building(ctx context.Context, obj Observed, revision string) error {
	a := obj.GetArtifact()
	switch {
	case a == nil:
		return reconcile.ProgressUnknown(ctx, obj, "building artifact")
	case a.Revision != revision:
		return reconcile.Progress(ctx, obj, "building artifact: new upstream revision '%s'", revision)
	}
	return nil
}

// Conditions declares a source kind's conditions for the skeleton: the ones
// every source writes (Ready, Reconciling, Stalled, ArtifactInStorage, and
// the negative FetchFailed, StorageOperationFailed and ArtifactOutdated,
// which a success clears), then the kind's own positive and negative ones.
func Conditions(own []string, ownNegative ...string) reconcile.Conditions {
	negative := append([]string{sourcev1.FetchFailedCondition, sourcev1.StorageOperationFailedCondition,
		sourcev1.ArtifactOutdatedCondition}, ownNegative...)
	owned := append([]string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition,
		sourcev1.ArtifactInStorageCondition}, own...)
	return reconcile.Conditions{Owned: append(owned, negative...), Negative: negative}
}
