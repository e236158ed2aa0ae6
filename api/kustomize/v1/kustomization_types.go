package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Values of spec.deletionPolicy: what happens to the applied objects when
// the Kustomization itself is deleted.
const (
	// DeletionPolicyMirrorPrune deletes the objects when spec.prune is true
	// and orphans them otherwise. It is the default.
	DeletionPolicyMirrorPrune = "MirrorPrune"
	// DeletionPolicyDelete always deletes the objects.
	DeletionPolicyDelete = "Delete"
	// DeletionPolicyWaitForTermination deletes the objects and holds the
	// Kustomization's finalizer until they are gone (or the timeout passes).
	DeletionPolicyWaitForTermination = "WaitForTermination"
	// DeletionPolicyOrphan always leaves the objects in the cluster.
	DeletionPolicyOrphan = "Orphan"
)

// Values of spec.postBuild.substituteStrategy.
const (
	// SubstituteWithVariables, the default, runs substitution only when at
	// least one variable is defined inline or by substituteFrom.
	SubstituteWithVariables = "WithVariables"
	// SubstituteAlways runs substitution even with no variables defined, so
	// defaults such as ${var:=value} still apply.
	SubstituteAlways = "Always"
)

// Values of spec.buildMetadata.
const (
	// OriginAnnotations asks kustomize to annotate each object with the file
	// it came from.
	OriginAnnotations = "originAnnotations"
	// TransformerAnnotations asks kustomize to annotate each object with the
	// transformers that changed it.
	TransformerAnnotations = "transformerAnnotations"
)

// DecryptionProviderSOPS is the only decryption provider: Mozilla SOPS.
const DecryptionProviderSOPS = "sops"

// Values of spec.postBuild.substituteFrom[].kind.
const (
	SubstituteFromConfigMap = "ConfigMap"
	SubstituteFromSecret    = "Secret"
)

// KustomizationSpec is what the user asks of a Kustomization: which source
// directory to build, how to transform the result, and how to apply it.
type KustomizationSpec struct {
	// CommonMetadata holds labels and annotations added to every applied
	// object, replacing values under the same keys.
	// +optional
	CommonMetadata *CommonMetadata `json:"commonMetadata,omitempty"`

	// DependsOn lists Kustomizations that must be ready before this one is
	// reconciled.
	// +optional
	DependsOn []meta.DependencyReference `json:"dependsOn,omitempty"`

	// Decryption configures decryption of SOPS-encrypted manifests before
	// they are applied.
	// +optional
	Decryption *Decryption `json:"decryption,omitempty"`

	// DeletionPolicy says what happens to the applied objects when this
	// Kustomization is deleted. Defaults to MirrorPrune.
	// +kubebuilder:validation:Enum=MirrorPrune;Delete;WaitForTermination;Orphan
	// +optional
	DeletionPolicy string `json:"deletionPolicy,omitempty"`

	// Interval is how often the build is applied again, undoing drift.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// RetryInterval is how long to wait after a failed attempt before the
	// next one. Defaults to Interval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`

	// KubeConfig points at the credentials of a remote cluster to apply to
	// instead of the local one. Combined with ServiceAccountName, that
	// account is impersonated on the remote cluster.
	// +optional
	KubeConfig *meta.KubeConfigReference `json:"kubeConfig,omitempty"`

	// Path is the directory of the artifact to build, relative to its root;
	// the root when empty. If the directory has no kustomization.yaml, one
	// listing every manifest below it is generated.
	// +optional
	Path string `json:"path,omitempty"`

	// PostBuild configures variable substitution on the built manifests.
	// +optional
	PostBuild *PostBuild `json:"postBuild,omitempty"`

	// Prune deletes objects that a previous revision applied and the current
	// one no longer contains.
	// +required
	Prune bool `json:"prune"`

	// HealthChecks lists objects whose health decides the Healthy and Ready
	// conditions. Ignored when Wait is true.
	// +optional
	HealthChecks []meta.NamespacedObjectKindReference `json:"healthChecks,omitempty"`

	// HealthCheckExprs are CEL expressions judging the health of custom
	// resources that kstatus cannot assess on its own.
	// +optional
	HealthCheckExprs []meta.HealthCheckExpressions `json:"healthCheckExprs,omitempty"`

	// Patches are strategic-merge or JSON 6902 patches applied to the build,
	// each to the objects its target selects.
	// +optional
	Patches []meta.Patch `json:"patches,omitempty"`

	// Images rewrites container image names, tags or digests in the build.
	// +optional
	Images []meta.Image `json:"images,omitempty"`

	// ServiceAccountName is the service account, in this Kustomization's
	// namespace, to impersonate when applying. The controller's
	// --default-service-account is used when empty.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// SourceRef points at the source whose artifact holds the manifests.
	// +required
	SourceRef CrossNamespaceSourceReference `json:"sourceRef"`

	// Suspend stops further reconciliations; one already running finishes.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// TargetNamespace sets the namespace of every namespaced object in the
	// build, overriding what kustomization.yaml says.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// NamePrefix is prepended to the name of every object in the build.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +optional
	NamePrefix string `json:"namePrefix,omitempty"`

	// NameSuffix is appended to the name of every object in the build.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +optional
	NameSuffix string `json:"nameSuffix,omitempty"`

	// Timeout bounds validation, apply and health checks. Defaults to
	// Interval minus 30s, and is never less than 30s.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Force recreates objects whose apply fails because an immutable field
	// changed.
	// +kubebuilder:default=false
	// +optional
	Force bool `json:"force,omitempty"`

	// Wait health-checks every applied object, in place of HealthChecks.
	// +optional
	Wait bool `json:"wait,omitempty"`

	// Components are paths of kustomize components, relative to Path, added
	// to the build.
	// +optional
	Components []string `json:"components,omitempty"`

	// IgnoreMissingComponents skips entries of Components that do not exist
	// instead of failing the build.
	// +optional
	IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`

	// BuildMetadata asks kustomize to record build metadata on each object
	// as annotations.
	// +optional
	BuildMetadata []BuildMetadataOption `json:"buildMetadata,omitempty"`

	// Ignore lists fields, by JSON pointer, that the controller neither sets
	// nor reports as drift on the objects each rule selects.
	// +optional
	Ignore []meta.IgnoreRule `json:"ignore,omitempty"`
}

// BuildMetadataOption is one kind of kustomize build metadata.
// +kubebuilder:validation:Enum=originAnnotations;transformerAnnotations
type BuildMetadataOption string

// CommonMetadata is a set of labels and annotations added to objects.
type CommonMetadata struct {
	// Annotations to add.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// Labels to add.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// Decryption says how to decrypt encrypted manifests.
type Decryption struct {
	// Provider is the decryption engine.
	// +kubebuilder:validation:Enum=sops
	// +required
	Provider string `json:"provider"`

	// SecretRef names a Secret holding the decryption keys (age, PGP) or
	// cloud KMS credentials.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// ServiceAccountName is a service account whose workload identity is
	// used to reach a cloud KMS. It needs the ObjectLevelWorkloadIdentity
	// feature gate.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// PostBuild configures what happens to the manifests after kustomize built
// them.
type PostBuild struct {
	// Substitute maps variable names to values; ${name} in the manifests is
	// replaced. Bash-style forms such as ${var:=default} are understood.
	// These values win over SubstituteFrom.
	// +optional
	Substitute map[string]string `json:"substitute,omitempty"`

	// SubstituteFrom reads more variables from ConfigMaps and Secrets in
	// this namespace, their keys being the variable names. A later entry
	// overrides an earlier one.
	// +optional
	SubstituteFrom []SubstituteReference `json:"substituteFrom,omitempty"`

	// SubstituteStrategy says when substitution runs: WithVariables (the
	// default) only when a variable is defined, Always in every case.
	// +kubebuilder:validation:Enum=WithVariables;Always
	// +optional
	SubstituteStrategy string `json:"substituteStrategy,omitempty"`
}

// SubstituteReference names a ConfigMap or Secret holding variables.
type SubstituteReference struct {
	// Kind of the object: Secret or ConfigMap.
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	// +required
	Kind string `json:"kind"`

	// Name of the object, in the Kustomization's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Optional tolerates a missing object, treating it as empty.
	// +kubebuilder:default=false
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// CrossNamespaceSourceReference points at a source object, possibly in
// another namespace.
type CrossNamespaceSourceReference struct {
	// APIVersion of the source.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the source.
	// +kubebuilder:validation:Enum=OCIRepository;GitRepository;Bucket;ExternalArtifact
	// +required
	Kind string `json:"kind"`

	// Name of the source.
	// +required
	Name string `json:"name"`

	// Namespace of the source; the Kustomization's when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// String renders the reference as Kind/name or Kind/namespace/name.
func (in CrossNamespaceSourceReference) String() string {
	if in.Namespace == "" {
		return in.Kind + "/" + in.Name
	}
	return in.Kind + "/" + in.Namespace + "/" + in.Name
}

// KustomizationStatus is what the controller observed and did.
type KustomizationStatus struct {
	meta.ReconcileRequestStatus `json:",inline"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling, Stalled and Healthy.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastAppliedRevision is the source revision last applied successfully.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`

	// LastAppliedOriginRevision is the origin revision (for example the Git
	// commit an OCI artifact was built from) recorded in the metadata of the
	// artifact last applied successfully.
	// +optional
	LastAppliedOriginRevision string `json:"lastAppliedOriginRevision,omitempty"`

	// LastAttemptedRevision is the source revision of the last attempt,
	// successful or not.
	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`

	// Inventory lists the objects applied by the last successful run; it is
	// what pruning compares against.
	// +optional
	Inventory *ResourceInventory `json:"inventory,omitempty"`

	// History records the last distinct outcomes, newest first.
	// +optional
	History meta.History `json:"history,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ks,categories=all;fluxcd;fluxcd-appliers
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"

// Kustomization builds a path of a source artifact with kustomize and keeps
// the cluster in line with the result.
type Kustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KustomizationSpec `json:"spec,omitempty"`

	// +kubebuilder:default={"observedGeneration":-1}
	Status KustomizationStatus `json:"status,omitempty"`
}

// minTimeout is the floor of GetTimeout, and the margin subtracted from
// the interval when no timeout is set.
const minTimeout = 30 * time.Second

// GetTimeout returns spec.timeout, or the interval minus 30s when unset; the
// result is never below 30s.
func (in *Kustomization) GetTimeout() time.Duration {
	d := in.Spec.Interval.Duration - minTimeout
	if in.Spec.Timeout != nil {
		d = in.Spec.Timeout.Duration
	}
	return max(d, minTimeout)
}

// GetRetryInterval returns spec.retryInterval, or the interval when unset.
func (in *Kustomization) GetRetryInterval() time.Duration {
	if in.Spec.RetryInterval != nil {
		return in.Spec.RetryInterval.Duration
	}
	return in.GetRequeueAfter()
}

// GetRequeueAfter returns spec.interval.
func (in *Kustomization) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetDependsOn returns spec.dependsOn.
func (in *Kustomization) GetDependsOn() []meta.DependencyReference {
	return in.Spec.DependsOn
}

// GetConditions returns status.conditions.
func (in *Kustomization) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces status.conditions.
func (in *Kustomization) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetDeletionPolicy returns spec.deletionPolicy, defaulting to MirrorPrune.
func (in *Kustomization) GetDeletionPolicy() string {
	if in.Spec.DeletionPolicy == "" {
		return DeletionPolicyMirrorPrune
	}
	return in.Spec.DeletionPolicy
}

// The kind is read and written by the generic condition helpers.
var _ meta.ObjectWithConditions = &Kustomization{}

// +kubebuilder:object:root=true

// KustomizationList is a list of Kustomizations.
type KustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Kustomization `json:"items"`
}
