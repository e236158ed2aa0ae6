package v1beta1

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// DefaultRequeueAfter is how often an ArtifactGenerator is reconciled when
// none of its sources changed. Changes to sources trigger reconciliation
// immediately, so this only repairs drift.
const DefaultRequeueAfter = time.Hour

// ArtifactGeneratorSpec says which sources to read and which artifacts to
// build from them.
// +kubebuilder:validation:XValidation:rule="has(self.pathPattern) && size(self.pathPattern) > 0 || self.artifacts.all(a, a.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'))",message="artifact names must be valid Kubernetes object names when pathPattern is not set"
type ArtifactGeneratorSpec struct {
	// CommonMetadata holds labels and annotations added to every generated
	// ExternalArtifact, replacing values under the same keys.
	// +optional
	CommonMetadata *CommonMetadata `json:"commonMetadata,omitempty"`

	// Sources are the source objects read, each under an alias that copy
	// operations refer to as @alias.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	// +required
	Sources []SourceReference `json:"sources"`

	// PathPattern, "@alias/<pattern>", turns the generator into a template:
	// one set of artifacts is built for every directory of the source that
	// matches, and named captures such as {app} in the pattern can be used
	// in the artifacts' name and copy paths.
	// +kubebuilder:validation:Pattern="^@([a-z0-9]([a-z0-9_-]*[a-z0-9])?)/(.*)$"
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	PathPattern string `json:"pathPattern,omitempty"`

	// OutputArtifacts are the ExternalArtifacts to build.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	// +required
	OutputArtifacts []OutputArtifact `json:"artifacts"`
}

// CommonMetadata is a set of labels and annotations added to objects.
type CommonMetadata struct {
	// Annotations to add.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels to add.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// SourceReference names a source object and gives it an alias.
type SourceReference struct {
	// Alias identifies the source in copy operations. Unique within the
	// generator; lower-case letters, digits, '-' and '_', starting and
	// ending with a letter or digit.
	// +kubebuilder:validation:Pattern="^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$"
	// +kubebuilder:validation:MaxLength=63
	// +required
	Alias string `json:"alias"`

	// Name of the source object.
	// +kubebuilder:validation:Pattern="^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Namespace of the source object; the generator's when empty.
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Kind of the source object.
	// +kubebuilder:validation:Enum=Bucket;GitRepository;OCIRepository;HelmChart;ExternalArtifact
	// +required
	Kind string `json:"kind"`
}

// OutputArtifact describes one ExternalArtifact to generate.
type OutputArtifact struct {
	// Name of the ExternalArtifact, in the generator's namespace. With
	// PathPattern it may contain capture placeholders such as {app};
	// without, it must be a valid object name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Revision, "@alias", reuses that source's revision for the artifact.
	// When empty the revision is latest@<digest of the content>.
	// +kubebuilder:validation:Pattern="^@([a-z0-9]([a-z0-9_-]*[a-z0-9])?)$"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Revision string `json:"revision,omitempty"`

	// OriginRevision, "@alias", copies that source's origin revision (such
	// as a Git commit) into the artifact's org.opencontainers.image.revision
	// metadata; ignored when the source has none.
	// +kubebuilder:validation:Pattern="^@([a-z0-9]([a-z0-9_-]*[a-z0-9])?)$"
	// +kubebuilder:validation:MaxLength=64
	// +optional
	OriginRevision string `json:"originRevision,omitempty"`

	// Copy lists the file operations that fill the artifact, run in order;
	// a later operation overwrites what an earlier one wrote.
	// +kubebuilder:validation:MinItems=1
	// +required
	Copy []CopyOperation `json:"copy"`
}

// CopyOperation copies files matching a glob from a source into the
// artifact.
type CopyOperation struct {
	// From is "@alias/<glob>"; `*` matches within one directory and `**`
	// across directories. With PathPattern it may use capture placeholders.
	// +kubebuilder:validation:Pattern="^@([a-z0-9]([a-z0-9_-]*[a-z0-9])?)/(.*)$"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	From string `json:"from"`

	// To is "@artifact/<path>"; a trailing slash makes it a directory. With
	// PathPattern it may use capture placeholders.
	// +kubebuilder:validation:Pattern="^@(artifact)/(.*)$"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	To string `json:"to"`

	// Exclude holds globs of files and directories that From matches but
	// that are left out. They are matched relative to the source root or to
	// the part of From before its first wildcard; a pattern without a slash
	// matches a file name at any depth.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Exclude []string `json:"exclude,omitempty"`

	// Strategy is Overwrite (the default), Merge (deep-merge YAML into the
	// destination file, Helm-values style) or Extract (unpack tarballs; with
	// a glob, other files are skipped).
	// +kubebuilder:validation:Enum=Overwrite;Merge;Extract
	// +optional
	Strategy string `json:"strategy,omitempty"`
}

// ArtifactGeneratorStatus is what the controller observed and built.
type ArtifactGeneratorStatus struct {
	meta.ReconcileRequestStatus `json:",inline"`

	// Conditions: Ready, Reconciling and Stalled.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Inventory lists the ExternalArtifacts generated, used to garbage
	// collect the ones the spec no longer produces.
	// +optional
	Inventory []ExternalArtifactReference `json:"inventory,omitempty"`

	// ObservedSourcesDigest is a digest over the state of all sources at
	// the last build; a change means the artifacts must be rebuilt.
	// +optional
	ObservedSourcesDigest string `json:"observedSourcesDigest,omitempty"`
}

// ExternalArtifactReference records one generated ExternalArtifact.
type ExternalArtifactReference struct {
	// Name of the ExternalArtifact.
	// +required
	Name string `json:"name"`

	// Namespace of the ExternalArtifact.
	// +required
	Namespace string `json:"namespace"`

	// Digest of its artifact file.
	// +required
	Digest string `json:"digest"`

	// Filename of its artifact file in storage.
	// +required
	Filename string `json:"filename"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ag,categories=all;fluxcd;fluxcd-sources
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"

// ArtifactGenerator builds ExternalArtifacts out of files of other sources.
type ArtifactGenerator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ArtifactGeneratorSpec   `json:"spec,omitempty"`
	Status ArtifactGeneratorStatus `json:"status,omitempty"`
}

// GetConditions returns status.conditions.
func (in *ArtifactGenerator) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces status.conditions.
func (in *ArtifactGenerator) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns DefaultRequeueAfter: the kind has no interval.
func (in *ArtifactGenerator) GetRequeueAfter() time.Duration {
	return DefaultRequeueAfter
}

// IsDisabled reports whether ReconcileAnnotation pauses the object.
func (in *ArtifactGenerator) IsDisabled() bool {
	return strings.EqualFold(in.GetAnnotations()[ReconcileAnnotation], DisabledValue)
}

// HasArtifactInInventory reports whether the inventory holds an
// ExternalArtifact with this name, namespace and digest.
func (in *ArtifactGenerator) HasArtifactInInventory(name, namespace, digest string) bool {
	for _, ref := range in.Status.Inventory {
		if ref.Name == name && ref.Namespace == namespace && ref.Digest == digest {
			return true
		}
	}
	return false
}

// The kind is read and written by the generic condition helpers.
var _ meta.ObjectWithConditions = &ArtifactGenerator{}

// +kubebuilder:object:root=true

// ArtifactGeneratorList is a list of ArtifactGenerators.
type ArtifactGeneratorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ArtifactGenerator `json:"items"`
}
