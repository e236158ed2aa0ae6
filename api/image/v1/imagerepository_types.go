package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Registry providers whose workload identity can authenticate a scan.
const (
	GenericProvider = "generic"
	AWSProvider     = "aws"
	AzureProvider   = "azure"
	GCPProvider     = "gcp"
)

// DefaultExclusionList keeps cosign signature tags out of the scan results.
var DefaultExclusionList = []string{`^.*\.sig$`}

// ImageRepositorySpec says which container repository to scan and how.
type ImageRepositorySpec struct {
	// Image is the repository to scan, such as ghcr.io/org/app or alpine.
	// +required
	Image string `json:"image"`

	// Interval between scans.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// Timeout of one scan; Interval when unset.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// SecretRef names a docker-registry Secret (.dockerconfigjson) with the
	// registry credentials.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// ProxySecretRef names a Secret with the proxy (address, username,
	// password) used to reach the registry.
	// +optional
	ProxySecretRef *meta.LocalObjectReference `json:"proxySecretRef,omitempty"`

	// ServiceAccountName names a service account whose image pull secrets
	// are used to authenticate.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// CertSecretRef names a Secret (type Opaque or kubernetes.io/tls) with
	// a client certificate pair (tls.crt, tls.key) and/or a CA (ca.crt)
	// for the TLS connection to the registry. The old caFile, certFile and
	// keyFile keys are deprecated.
	// +optional
	CertSecretRef *meta.LocalObjectReference `json:"certSecretRef,omitempty"`

	// Suspend stops further scans; one already running completes.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// AccessFrom lists the namespaces whose ImagePolicies may refer to
	// this repository from another namespace.
	// +optional
	AccessFrom *meta.AccessFrom `json:"accessFrom,omitempty"`

	// ExclusionList holds regular expressions; matching tags are dropped
	// from the scan results. Default: ["^.*\\.sig$"].
	// +kubebuilder:default:={"^.*\\.sig$"}
	// +kubebuilder:validation:MaxItems=25
	// +optional
	ExclusionList []string `json:"exclusionList,omitempty"`

	// Provider authenticates with the workload identity of a cloud: aws,
	// azure, gcp, or generic (default: no cloud identity).
	// +kubebuilder:validation:Enum=generic;aws;azure;gcp
	// +kubebuilder:default:=generic
	// +optional
	Provider string `json:"provider,omitempty"`

	// Insecure allows plain-HTTP registries.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
}

// ScanResult summarises the last scan.
type ScanResult struct {
	// Revision is a digest of the scanned tag list; it changes when the
	// tags do.
	// +optional
	Revision string `json:"revision,omitempty"`

	// TagCount is how many tags the scan kept.
	// +required
	TagCount int `json:"tagCount"`

	// ScanTime is when the scan finished.
	// +optional
	ScanTime metav1.Time `json:"scanTime,omitempty"`

	// LatestTags samples the tags: the first ten in reverse alphabetical
	// order.
	// +optional
	LatestTags []string `json:"latestTags,omitempty"`
}

// ImageRepositoryStatus is the observed state of an ImageRepository.
type ImageRepositoryStatus struct {
	// ObservedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// CanonicalImageName is spec.image with the implied parts spelled out,
	// for example docker.io/library/alpine for alpine.
	// +optional
	CanonicalImageName string `json:"canonicalImageName,omitempty"`

	// LastScanResult summarises the last successful scan.
	// +optional
	LastScanResult *ScanResult `json:"lastScanResult,omitempty"`

	// ObservedExclusionList is the exclusion list the last scan applied.
	// +optional
	ObservedExclusionList []string `json:"observedExclusionList,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=imgrepo;imagerepo,categories=all;fluxcd;fluxcd-images
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.image"
// +kubebuilder:printcolumn:name="Tags",type="string",JSONPath=".status.lastScanResult.tagCount"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"
// +kubebuilder:printcolumn:name="Last scan",type="string",JSONPath=".status.lastScanResult.scanTime",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// ImageRepository is a container image repository whose tags the image
// reflector scans periodically.
type ImageRepository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ImageRepositorySpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status ImageRepositoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ImageRepositoryList is a list of ImageRepository objects.
type ImageRepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImageRepository `json:"items"`
}

// GetConditions returns the status conditions.
func (in *ImageRepository) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *ImageRepository) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval.
func (in *ImageRepository) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetTimeout returns spec.timeout, or spec.interval when unset.
func (in *ImageRepository) GetTimeout() time.Duration {
	if in.Spec.Timeout == nil {
		return in.Spec.Interval.Duration
	}
	return in.Spec.Timeout.Duration
}

// GetExclusionList returns spec.exclusionList, or DefaultExclusionList when
// it is unset (the API server normally fills the default in).
func (in *ImageRepository) GetExclusionList() []string {
	if in.Spec.ExclusionList == nil {
		return DefaultExclusionList
	}
	return in.Spec.ExclusionList
}

// GetProvider returns spec.provider, or "generic".
func (in *ImageRepository) GetProvider() string {
	if in.Spec.Provider == "" {
		return GenericProvider
	}
	return in.Spec.Provider
}
