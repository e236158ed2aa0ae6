package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/weir-gitops/weir/api/meta"
)

// Source is what every kind of this group offers its consumers: the artifact
// it last stored and how often it looks upstream again. Kustomizations,
// HelmReleases and generators depend on it rather than on concrete kinds, so
// a new source kind only has to implement it.
//
// +kubebuilder:object:generate=false
type Source interface {
	runtime.Object
	// GetArtifact returns the artifact in status, or nil if none is stored.
	GetArtifact() *meta.Artifact
	// GetRequeueAfter is the interval between two looks upstream.
	GetRequeueAfter() time.Duration
}

// Object is a Source as a controller reads and watches it: with object
// metadata (it satisfies controller-runtime's client.Object).
//
// +kubebuilder:object:generate=false
type Object interface {
	metav1.Object
	Source
}

// NewObject returns an empty object of one of the group's kinds, or nil
// for a kind the group does not have. Consumers check which kinds their
// reference may name before asking.
func NewObject(kind string) Object {
	switch kind {
	case GitRepositoryKind:
		return &GitRepository{}
	case OCIRepositoryKind:
		return &OCIRepository{}
	case BucketKind:
		return &Bucket{}
	case HelmRepositoryKind:
		return &HelmRepository{}
	case HelmChartKind:
		return &HelmChart{}
	case ExternalArtifactKind:
		return &ExternalArtifact{}
	}
	return nil
}

// Every kind of the group is a Source and carries conditions.
var (
	_ Source = &GitRepository{}
	_ Source = &OCIRepository{}
	_ Source = &Bucket{}
	_ Source = &HelmRepository{}
	_ Source = &HelmChart{}
	_ Source = &ExternalArtifact{}

	_ meta.ObjectWithConditions = &GitRepository{}
	_ meta.ObjectWithConditions = &OCIRepository{}
	_ meta.ObjectWithConditions = &Bucket{}
	_ meta.ObjectWithConditions = &HelmRepository{}
	_ meta.ObjectWithConditions = &HelmChart{}
	_ meta.ObjectWithConditions = &ExternalArtifact{}
)

// DefaultTimeout bounds one fetch from upstream when spec.timeout is unset;
// the CRDs default the field to the same value.
const DefaultTimeout = 60 * time.Second

// timeoutOrDefault returns d, or DefaultTimeout when d is unset.
func timeoutOrDefault(d *metav1.Duration) time.Duration {
	if d == nil {
		return DefaultTimeout
	}
	return d.Duration
}
