package ocirepository

import (
	"context"
	"fmt"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// recordEvents tells people what happened: a new artifact, or a failure.
// An unchanged digest stays quiet, as in Flux.
func (r *Reconciler) recordEvents(ctx context.Context, obj *sourcev1.OCIRepository, out *outcome, err error) {
	if r.Events == nil {
		return
	}
	if err != nil {
		r.Events.Warning(ctx, obj, errs.Reason(err, "ReconciliationFailed"), nil, "%s", err)
		return
	}
	if !out.newArtifact || out.artifact.Digest == out.previousDigest {
		return
	}
	r.Events.Normal(ctx, obj, "NewArtifact", map[string]string{
		"revision": out.artifact.Revision,
		"digest":   out.artifact.Digest,
	}, "%s", newArtifactMessage(obj.Spec.URL, out.artifact.Revision, out.artifact.Metadata))
}

// newArtifactMessage is Flux's: the revision and URL, and the origin the
// artifact was pushed from when its annotations say.
func newArtifactMessage(url, revision string, metadata map[string]string) string {
	msg := fmt.Sprintf("stored artifact with revision '%s' from '%s'", revision, url)
	if source, rev := metadata[oci.SourceAnnotation], metadata[oci.RevisionAnnotation]; source != "" && rev != "" {
		msg += fmt.Sprintf(", origin source '%s', origin revision '%s'", source, rev)
	}
	return msg
}
