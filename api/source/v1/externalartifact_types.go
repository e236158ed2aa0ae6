package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// ExternalArtifactRequeueAfter is what an ExternalArtifact reports as its
// interval. It has no spec.interval: its producer updates it whenever it
// likes, so consumers just look again every so often.
const ExternalArtifactRequeueAfter = time.Minute

// ExternalArtifactSpec says which object the artifact was made from.
type ExternalArtifactSpec struct {
	// SourceRef points at the custom resource the producer generated the
	// artifact for (an ArtifactGenerator, for instance).
	// +optional
	SourceRef *meta.NamespacedObjectKindReference `json:"sourceRef,omitempty"`
}

// ExternalArtifactStatus is written by the producer, not by weir's source
// controller.
type ExternalArtifactStatus struct {
	// Artifact is the file the producer stored and serves.
	// +optional
	Artifact *meta.Artifact `json:"artifact,omitempty"`

	// Conditions of the object: at least Ready, and SourceVerified when the
	// producer checked signatures.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ea,categories=all;fluxcd;fluxcd-sources
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.sourceRef.name`

// ExternalArtifact publishes an artifact made by a controller other than the
// source controller, so Kustomizations and HelmReleases can consume it like
// any other source.
type ExternalArtifact struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExternalArtifactSpec   `json:"spec,omitempty"`
	Status ExternalArtifactStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *ExternalArtifact) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *ExternalArtifact) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns ExternalArtifactRequeueAfter.
func (in *ExternalArtifact) GetRequeueAfter() time.Duration {
	return ExternalArtifactRequeueAfter
}

// GetArtifact returns the published artifact, or nil.
func (in *ExternalArtifact) GetArtifact() *meta.Artifact {
	return in.Status.Artifact
}

// +kubebuilder:object:root=true

// ExternalArtifactList is a list of ExternalArtifacts.
type ExternalArtifactList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExternalArtifact `json:"items"`
}
