package reconcile

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/weir-gitops/weir/api/meta"
)

// ArtifactChanged passes the source events that bring a new artifact: a
// source created, or one whose artifact appeared, changed revision or
// digest, or moved: a new URL for the same file, as when a standby replica
// takes the lead and serves the artifact it rebuilt from its own storage
// (a consumer still failing on the old address must not wait out its
// retry interval). Consumers (Kustomizations, HelmCharts, HelmReleases) use it to
// follow their source at once instead of waiting for their interval.
type ArtifactChanged struct{ predicate.Funcs }

type artifactHolder interface{ GetArtifact() *meta.Artifact }

// Create passes every new source.
func (ArtifactChanged) Create(event.CreateEvent) bool { return true }

// Delete passes nothing: a consumer notices a missing source on its own run.
func (ArtifactChanged) Delete(event.DeleteEvent) bool { return false }

// Generic passes nothing.
func (ArtifactChanged) Generic(event.GenericEvent) bool { return false }

// Update passes a new or changed artifact.
func (ArtifactChanged) Update(e event.UpdateEvent) bool {
	older, ok1 := e.ObjectOld.(artifactHolder)
	newer, ok2 := e.ObjectNew.(artifactHolder)
	if !ok1 || !ok2 {
		return false
	}
	a, b := older.GetArtifact(), newer.GetArtifact()
	switch {
	case b == nil:
		return false
	case a == nil:
		return true
	default:
		return a.Digest != b.Digest || a.Revision != b.Revision || a.URL != b.URL
	}
}
