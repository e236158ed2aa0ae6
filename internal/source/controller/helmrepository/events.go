package helmrepository

import (
	"context"
	"fmt"

	"github.com/docker/go-units"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// recordEvents tells people what happened: a new index, a recovery from a
// failure, or a failure. An unchanged index stays quiet, as in Flux.
func (r *Reconciler) recordEvents(ctx context.Context, obj *sourcev1.HelmRepository, out *outcome, err error) {
	if r.Events == nil {
		return
	}
	if err != nil {
		r.Events.Warning(ctx, obj, errs.Reason(err, meta.FailedReason), nil, "%s", err)
		return
	}
	a := out.artifact
	reason := "NewArtifact"
	switch {
	case out.newArtifact && a.Digest != out.previousDigest:
	case out.wasFailing:
		reason = meta.SucceededReason
	default:
		return
	}
	r.Events.Normal(ctx, obj, reason, map[string]string{
		"revision": a.Revision,
		"digest":   a.Digest,
	}, "%s", newArtifactMessage(a, out.url))
}

// newArtifactMessage is source-controller's: the stored index's size, in
// go-units' human form (30.88kB), and the repository URL.
func newArtifactMessage(a *meta.Artifact, url string) string {
	size := "unknown size"
	if a.Size != nil {
		size = "size " + units.HumanSize(float64(*a.Size))
	}
	return fmt.Sprintf("stored fetched index of %s from '%s'", size, url)
}
