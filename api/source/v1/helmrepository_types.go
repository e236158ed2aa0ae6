package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Values of spec.type of a HelmRepository.
const (
	// HelmRepositoryTypeDefault is a classic chart repository serving an
	// index.yaml over HTTP(S); what an empty type means.
	HelmRepositoryTypeDefault string = "default"
	// HelmRepositoryTypeOCI is a registry holding charts as OCI artifacts.
	// Such a HelmRepository only carries URL and credentials for the
	// HelmCharts that use it: it fetches nothing and has no artifact.
	HelmRepositoryTypeOCI string = "oci"
)

// DefaultHelmRepositoryInterval is how often an index is fetched when
// spec.interval is unset.
const DefaultHelmRepositoryInterval = time.Minute

// HelmRepositorySpec says where a Helm repository is and how to reach it.
type HelmRepositorySpec struct {
	// URL of the repository: http(s):// for an index, oci:// for a
	// registry.
	// +kubebuilder:validation:Pattern="^(http|https|oci)://.*$"
	// +required
	URL string `json:"url"`

	// SecretRef names a Secret with username and password (and, for old
	// objects, TLS files; prefer CertSecretRef for those).
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// CertSecretRef names a Secret with a CA (ca.crt) and/or a client
	// certificate and key (tls.crt, tls.key). It wins over TLS data in
	// SecretRef.
	// +optional
	CertSecretRef *meta.LocalObjectReference `json:"certSecretRef,omitempty"`

	// PassCredentials sends the credentials also to hosts other than URL's,
	// for indexes whose chart URLs point elsewhere. Beware: the other host
	// learns them.
	// +optional
	PassCredentials bool `json:"passCredentials,omitempty"`

	// Interval between two fetches of the index; one minute when unset.
	// The controller may add a little jitter.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`

	// Insecure allows plain HTTP to an OCI registry; ignored for the
	// default type.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// Timeout bounds one index fetch, or one chart pull by a HelmChart
	// from an OCI repository; 60s when unset.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Suspend stops reconciliation while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// AccessFrom would restrict which namespaces may use this repository;
	// it is accepted but not enforced.
	// +optional
	AccessFrom *meta.AccessFrom `json:"accessFrom,omitempty"`

	// Type is default (an index over HTTP(S)) or oci (a registry, URL must
	// start with oci://).
	// +kubebuilder:validation:Enum=default;oci
	// +optional
	Type string `json:"type,omitempty"`

	// Provider picks how to authenticate to an OCI registry: generic
	// (default), aws, azure or gcp. Ignored for the default type.
	// +kubebuilder:validation:Enum=generic;aws;azure;gcp
	// +kubebuilder:default=generic
	// +optional
	Provider string `json:"provider,omitempty"`
}

// HelmRepositoryStatus is what the controller last observed and stored.
type HelmRepositoryStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions of the object.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// URL is a convenience download link for the latest index; use
	// Artifact for anything that needs to be exact.
	// +optional
	URL string `json:"url,omitempty"`

	// Artifact is the stored index.yaml.
	// +optional
	Artifact *meta.Artifact `json:"artifact,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=helmrepo,categories=all;fluxcd;fluxcd-sources
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// HelmRepository is a Helm chart repository. For the default type the
// controller stores its index; for the oci type it only holds connection
// details for HelmCharts.
type HelmRepository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec HelmRepositorySpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status HelmRepositoryStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *HelmRepository) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *HelmRepository) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval, one minute when unset.
func (in *HelmRepository) GetRequeueAfter() time.Duration {
	if in.Spec.Interval.Duration == 0 {
		return DefaultHelmRepositoryInterval
	}
	return in.Spec.Interval.Duration
}

// GetTimeout returns spec.timeout, 60s when unset.
func (in *HelmRepository) GetTimeout() time.Duration {
	return timeoutOrDefault(in.Spec.Timeout)
}

// GetArtifact returns the stored index, or nil.
func (in *HelmRepository) GetArtifact() *meta.Artifact {
	return in.Status.Artifact
}

// IsOCI reports whether the repository is an OCI registry.
func (in *HelmRepository) IsOCI() bool {
	return in.Spec.Type == HelmRepositoryTypeOCI
}

// +kubebuilder:object:root=true

// HelmRepositoryList is a list of HelmRepositories.
type HelmRepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HelmRepository `json:"items"`
}
