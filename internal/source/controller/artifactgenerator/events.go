package artifactgenerator

import (
	"context"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// recordEvents tells people what happened, with source-watcher's reasons
// and messages: each ExternalArtifact with a new revision and the
// generator's success (reason Ready), a run that found nothing to do, or
// the failure.
func (r *Reconciler) recordEvents(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, out *outcome, err error) {
	if r.Events == nil {
		return
	}
	if err != nil {
		r.Events.Warning(ctx, obj, errs.Reason(err, meta.ReconciliationFailedReason), nil, "%s", failure(out, err))
		return
	}
	if out.upToDate {
		r.Events.Normal(ctx, obj, meta.ReadyCondition, nil, "No drift detected, %d artifact(s) up to date", len(obj.Status.Inventory))
		return
	}
	for _, c := range out.changed {
		r.Events.Normal(ctx, obj, meta.ReadyCondition, nil,
			"%s/%s/%s reconciled with revision %s", sourcev1.ExternalArtifactKind, c.namespace, c.name, c.revision)
	}
	r.Events.Normal(ctx, obj, meta.ReadyCondition, nil, "%s", succeeded(len(out.inventory)))
}
