package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// OCIRepositoryPrefix is the scheme every OCIRepository URL starts with.
const OCIRepositoryPrefix = "oci://"

// Authentication providers for spec.provider of an OCIRepository (and of an
// OCI HelmRepository).
const (
	// GenericOCIProvider uses static credentials from spec.secretRef or
	// the ServiceAccount's image pull secrets.
	GenericOCIProvider string = "generic"
	// AmazonOCIProvider uses AWS workload identity for ECR.
	AmazonOCIProvider string = "aws"
	// AzureOCIProvider uses Azure workload identity for ACR.
	AzureOCIProvider string = "azure"
	// GoogleOCIProvider uses GCP workload identity for Artifact Registry.
	GoogleOCIProvider string = "gcp"
)

// What to do with the selected layer (spec.layerSelector.operation).
const (
	// OCILayerExtract unpacks the layer's tarball into the artifact; the
	// default.
	OCILayerExtract string = "extract"
	// OCILayerCopy stores the layer's compressed bytes unchanged.
	OCILayerCopy string = "copy"
)

// Media types of the artifacts `flux push artifact` writes and the
// OCIRepository reads.
const (
	// OCIArtifactConfigMediaType is the media type of the config blob.
	OCIArtifactConfigMediaType = "application/vnd.cncf.flux.config.v1+json"
	// OCIArtifactLayerMediaType is the media type of the content layer, a
	// gzipped tarball.
	OCIArtifactLayerMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
)

// DefaultOCITag is pulled when spec.ref names nothing.
const DefaultOCITag = "latest"

// OCIRepositorySpec says which OCI artifact to pull and how.
type OCIRepositorySpec struct {
	// URL of the repository in a registry, as oci://host/path.
	// +kubebuilder:validation:Pattern="^oci://.*$"
	// +required
	URL string `json:"url"`

	// Reference is the digest, semver range or tag to pull; the latest tag
	// when omitted.
	// +optional
	Reference *OCIRepositoryRef `json:"ref,omitempty"`

	// LayerSelector picks the layer to store; the first layer, extracted,
	// when omitted.
	// +optional
	LayerSelector *OCILayerSelector `json:"layerSelector,omitempty"`

	// Provider picks how to authenticate to the registry: generic (default),
	// aws, azure or gcp.
	// +kubebuilder:validation:Enum=generic;aws;azure;gcp
	// +kubebuilder:default=generic
	// +optional
	Provider string `json:"provider,omitempty"`

	// SecretRef names a kubernetes.io/dockerconfigjson Secret with registry
	// credentials.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// Verify asks for the artifact's signature to be checked.
	// +optional
	Verify *OCIRepositoryVerification `json:"verify,omitempty"`

	// ServiceAccountName is a ServiceAccount whose image pull secrets (or,
	// with a cloud provider, workload identity) are used.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// CertSecretRef names a Secret with a CA (ca.crt) and/or a client
	// certificate and key (tls.crt, tls.key) for the registry's TLS.
	// +optional
	CertSecretRef *meta.LocalObjectReference `json:"certSecretRef,omitempty"`

	// ProxySecretRef names a Secret with the address, and optionally
	// credentials, of a proxy to reach the registry through.
	// +optional
	ProxySecretRef *meta.LocalObjectReference `json:"proxySecretRef,omitempty"`

	// Interval between two checks of the registry for a new digest. The
	// controller may add a little jitter.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// Timeout bounds one pull; 60s by default.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Ignore replaces the built-in exclusion list with patterns in
	// .gitignore syntax.
	// +optional
	Ignore *string `json:"ignore,omitempty"`

	// Insecure allows plain HTTP to the registry.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// Suspend stops reconciliation while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// OCIRepositoryRef names the artifact version to pull. Digest wins over
// SemVer, which wins over Tag.
type OCIRepositoryRef struct {
	// Digest to pull, as sha256:<hex>.
	// +optional
	Digest string `json:"digest,omitempty"`

	// SemVer is a version range; the highest matching tag is pulled.
	// +optional
	SemVer string `json:"semver,omitempty"`

	// SemverFilter is a regular expression tags must match before SemVer
	// is applied.
	// +optional
	SemverFilter string `json:"semverFilter,omitempty"`

	// Tag to pull; latest by default.
	// +optional
	Tag string `json:"tag,omitempty"`
}

// OCILayerSelector picks one layer of the artifact and says what to do
// with it.
type OCILayerSelector struct {
	// MediaType of the layer; the first layer with it is chosen.
	// +optional
	MediaType string `json:"mediaType,omitempty"`

	// Operation is extract (unpack the tarball, the default) or copy (store
	// the compressed layer as it is).
	// +kubebuilder:validation:Enum=extract;copy
	// +optional
	Operation string `json:"operation,omitempty"`
}

// OCIRepositoryStatus is what the controller last observed and stored.
type OCIRepositoryStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions of the object.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// URL is a convenience download link for the latest artifact; use
	// Artifact for anything that needs to be exact.
	// +optional
	URL string `json:"url,omitempty"`

	// Artifact is the last stored content; its metadata carries the OCI
	// annotations of the pulled manifest.
	// +optional
	Artifact *meta.Artifact `json:"artifact,omitempty"`

	// ObservedIgnore is the spec.ignore that Artifact was built with.
	// +optional
	ObservedIgnore *string `json:"observedIgnore,omitempty"`

	// ObservedLayerSelector is the spec.layerSelector that Artifact was
	// built with.
	// +optional
	ObservedLayerSelector *OCILayerSelector `json:"observedLayerSelector,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ocirepo,categories=all;fluxcd;fluxcd-sources
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// OCIRepository follows an artifact in an OCI registry and stores a layer of
// each new digest it resolves to.
type OCIRepository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OCIRepositorySpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status OCIRepositoryStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *OCIRepository) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *OCIRepository) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval.
func (in *OCIRepository) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetTimeout returns spec.timeout, 60s when unset.
func (in *OCIRepository) GetTimeout() time.Duration {
	return timeoutOrDefault(in.Spec.Timeout)
}

// GetArtifact returns the stored artifact, or nil.
func (in *OCIRepository) GetArtifact() *meta.Artifact {
	return in.Status.Artifact
}

// GetLayerMediaType returns the media type to select, or "" for the first
// layer.
func (in *OCIRepository) GetLayerMediaType() string {
	if in.Spec.LayerSelector == nil {
		return ""
	}
	return in.Spec.LayerSelector.MediaType
}

// GetLayerOperation returns what to do with the selected layer, extract
// when unset.
func (in *OCIRepository) GetLayerOperation() string {
	if in.Spec.LayerSelector == nil || in.Spec.LayerSelector.Operation == "" {
		return OCILayerExtract
	}
	return in.Spec.LayerSelector.Operation
}

// +kubebuilder:object:root=true

// OCIRepositoryList is a list of OCIRepositories.
type OCIRepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OCIRepository `json:"items"`
}
