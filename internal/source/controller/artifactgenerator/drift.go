package artifactgenerator

import (
	"context"
	"slices"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Why a run builds (source-watcher's drift reasons, for the log); ""
// means nothing drifted.
const (
	driftNotReady          = "NotReady"
	driftGeneration        = "GenerationChanged"
	driftSources           = "SourcesChanged"
	driftArtifacts         = "ArtifactsChanged"
	driftArtifactMissing   = "ArtifactMissing"
	driftArtifactCorrupted = "ArtifactCorrupted"
	driftExternalArtifacts = "ExternalArtifactsChanged"
)

// drift says why the last build no longer stands, or "" when it does: the
// generator is Ready at its generation, its sources' artifacts are the
// ones it built from, every tarball of its inventory is stored intact
// (a corrupted one is removed), and the cluster holds exactly the
// ExternalArtifacts of its inventory with their digests (one deleted or
// edited by hand is put back).
func (r *Reconciler) drift(ctx context.Context, obj *sourceextensionsv1beta1.ArtifactGenerator, digest string) (string, error) {
	ready := conditions.Get(obj, meta.ReadyCondition)
	switch {
	case ready == nil || ready.Status != "True":
		return driftNotReady, nil
	case ready.ObservedGeneration != obj.Generation:
		return driftGeneration, nil
	case obj.Status.ObservedSourcesDigest != digest:
		return driftSources, nil
	case obj.Spec.PathPattern == "" && !sameNames(obj):
		return driftArtifacts, nil
	}
	for _, ref := range obj.Status.Inventory {
		a := meta.Artifact{
			Path:   artifact.ObjectDir(sourcev1.ExternalArtifactKind, ref.Namespace, ref.Name) + "/" + ref.Filename,
			Digest: ref.Digest,
		}
		if !r.Storage.Exists(a) {
			return driftArtifactMissing, nil
		}
		if err := r.Storage.Verify(a); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "artifact integrity verification failed, deleting corrupted artifact", "artifact", ref.Namespace+"/"+ref.Name)
			_ = r.Storage.Remove(a)
			return driftArtifactCorrupted, nil
		}
	}
	items, err := r.generated(ctx, obj)
	if err != nil {
		return "", err
	}
	if len(items) != len(obj.Status.Inventory) {
		return driftExternalArtifacts, nil
	}
	for _, ea := range items {
		a := ea.Status.Artifact
		if a == nil || !obj.HasArtifactInInventory(ea.Name, ea.Namespace, a.Digest) {
			return driftExternalArtifacts, nil
		}
	}
	return "", nil
}

// sameNames reports whether the inventory lists exactly the artifacts the
// spec names (without pathPattern, where names come from the sources).
func sameNames(obj *sourceextensionsv1beta1.ArtifactGenerator) bool {
	var spec, inv []string
	for _, a := range obj.Spec.OutputArtifacts {
		spec = append(spec, obj.Namespace+"/"+a.Name)
	}
	for _, ref := range obj.Status.Inventory {
		inv = append(inv, ref.Namespace+"/"+ref.Name)
	}
	slices.Sort(spec)
	slices.Sort(inv)
	return slices.Equal(spec, inv)
}
