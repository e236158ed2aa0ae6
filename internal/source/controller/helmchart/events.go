package helmchart

import (
	"context"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// recordEvents tells people what happened: a new chart artifact (reason
// ChartPullSucceeded or ChartPackageSucceeded, with Flux's summary), or a
// failure. An unchanged chart and waiting for the source stay quiet.
func (r *Reconciler) recordEvents(ctx context.Context, obj *sourcev1.HelmChart, out *outcome, err error) {
	if r.Events == nil {
		return
	}
	if err != nil {
		if !isWaiting(err) {
			r.Events.Warning(ctx, obj, errs.Reason(err, "ReconciliationFailed"), nil, "%s", err)
		}
		return
	}
	if !out.newArtifact || out.artifact.Digest == out.previousDigest {
		return
	}
	r.Events.Normal(ctx, obj, buildReason(out.build), map[string]string{
		"revision": out.artifact.Revision,
		"digest":   out.artifact.Digest,
	}, "%s", out.build.Summary())
}
