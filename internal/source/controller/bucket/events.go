package bucket

import (
	"context"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// recordEvents tells people what happened: a new artifact, or a failure.
// Unchanged revisions stay quiet, as in Flux.
func (r *Reconciler) recordEvents(ctx context.Context, obj *sourcev1.Bucket, out *outcome, err error) {
	if r.Events == nil {
		return
	}
	if err != nil {
		r.Events.Warning(ctx, obj, errs.Reason(err, "ReconciliationFailed"), nil, "%s", err)
		return
	}
	if !out.newArtifact {
		return
	}
	r.Events.Normal(ctx, obj, "NewArtifact", map[string]string{
		"revision": out.artifact.Revision,
		"digest":   out.artifact.Digest,
	}, "stored artifact with %d fetched files from '%s' bucket", out.fetched, obj.Spec.BucketName)
}
