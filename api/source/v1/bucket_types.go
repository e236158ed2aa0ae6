package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Object storage providers for spec.provider of a Bucket.
const (
	// BucketProviderGeneric talks the S3 API to any compatible server
	// (MinIO, Ceph, …); the default.
	BucketProviderGeneric string = "generic"
	// BucketProviderAmazon is AWS S3, with IAM and workload identity.
	BucketProviderAmazon string = "aws"
	// BucketProviderGoogle is Google Cloud Storage.
	BucketProviderGoogle string = "gcp"
	// BucketProviderAzure is Azure Blob Storage.
	BucketProviderAzure string = "azure"
)

// Security Token Service providers for spec.sts.provider.
const (
	// STSProviderAmazon is AWS STS; only with the aws bucket provider.
	STSProviderAmazon string = "aws"
	// STSProviderLDAP is MinIO's LDAP STS; only with the generic provider.
	STSProviderLDAP string = "ldap"
)

// BucketSpec says which bucket to download and how to reach it.
// +kubebuilder:validation:XValidation:rule="self.provider == 'aws' || self.provider == 'generic' || !has(self.sts)",message="STS configuration is only supported for the 'aws' and 'generic' Bucket providers"
// +kubebuilder:validation:XValidation:rule="self.provider != 'aws' || !has(self.sts) || self.sts.provider == 'aws'",message="'aws' is the only supported STS provider for the 'aws' Bucket provider"
// +kubebuilder:validation:XValidation:rule="self.provider != 'generic' || !has(self.sts) || self.sts.provider == 'ldap'",message="'ldap' is the only supported STS provider for the 'generic' Bucket provider"
// +kubebuilder:validation:XValidation:rule="!has(self.sts) || self.sts.provider != 'aws' || !has(self.sts.secretRef)",message="spec.sts.secretRef is not required for the 'aws' STS provider"
// +kubebuilder:validation:XValidation:rule="!has(self.sts) || self.sts.provider != 'aws' || !has(self.sts.certSecretRef)",message="spec.sts.certSecretRef is not required for the 'aws' STS provider"
// +kubebuilder:validation:XValidation:rule="self.provider != 'generic' || !has(self.serviceAccountName)",message="ServiceAccountName is not supported for the 'generic' Bucket provider"
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || !has(self.serviceAccountName)",message="cannot set both .spec.secretRef and .spec.serviceAccountName"
type BucketSpec struct {
	// Provider of the storage: generic (S3-compatible, the default), aws,
	// gcp or azure.
	// +kubebuilder:validation:Enum=generic;aws;gcp;azure
	// +kubebuilder:default=generic
	// +optional
	Provider string `json:"provider,omitempty"`

	// BucketName is the bucket (or Azure container) to download.
	// +required
	BucketName string `json:"bucketName"`

	// Endpoint is the storage server's address, host[:port] or a URL.
	// +required
	Endpoint string `json:"endpoint"`

	// STS fetches temporary credentials from a Security Token Service;
	// only for the aws and generic providers.
	// +optional
	STS *BucketSTSSpec `json:"sts,omitempty"`

	// Insecure allows plain HTTP to Endpoint.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// Region of the bucket, where the provider needs one.
	// +optional
	Region string `json:"region,omitempty"`

	// Prefix limits the download to object keys starting with it, filtered
	// by the server.
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// SecretRef names a Secret with the provider's credentials (accesskey
	// and secretkey for S3, for example).
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// ServiceAccountName is the ServiceAccount whose workload identity is
	// used; not for the generic provider, nor together with SecretRef.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// CertSecretRef names a Secret with a CA (ca.crt) and/or a client
	// certificate and key (tls.crt, tls.key) for Endpoint's TLS; generic
	// provider only.
	// +optional
	CertSecretRef *meta.LocalObjectReference `json:"certSecretRef,omitempty"`

	// ProxySecretRef names a Secret with the address, and optionally
	// credentials, of a proxy to reach Endpoint through.
	// +optional
	ProxySecretRef *meta.LocalObjectReference `json:"proxySecretRef,omitempty"`

	// Interval between two listings of the bucket. The controller may add
	// a little jitter.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// Timeout bounds one listing or download; 60s by default.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Ignore replaces the built-in exclusion list with patterns in
	// .gitignore syntax.
	// +optional
	Ignore *string `json:"ignore,omitempty"`

	// Suspend stops reconciliation while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// BucketSTSSpec points at a Security Token Service that hands out
// short-lived credentials for the bucket.
type BucketSTSSpec struct {
	// Provider of the service: aws or ldap.
	// +kubebuilder:validation:Enum=aws;ldap
	// +required
	Provider string `json:"provider"`

	// Endpoint is the service's HTTP(S) URL.
	// +kubebuilder:validation:Pattern="^(http|https)://.*$"
	// +required
	Endpoint string `json:"endpoint"`

	// SecretRef names a Secret with username and password for the service;
	// ldap only.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// CertSecretRef names a Secret with a CA and/or client certificate for
	// the service's TLS; ldap only.
	// +optional
	CertSecretRef *meta.LocalObjectReference `json:"certSecretRef,omitempty"`
}

// BucketStatus is what the controller last observed and stored.
type BucketStatus struct {
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

	// Artifact is the tarball of the last successful download.
	// +optional
	Artifact *meta.Artifact `json:"artifact,omitempty"`

	// ObservedIgnore is the spec.ignore that Artifact was built with.
	// +optional
	ObservedIgnore *string `json:"observedIgnore,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=all;fluxcd;fluxcd-sources
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.spec.endpoint`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// Bucket downloads the objects of an object storage bucket and stores them
// as a tarball artifact whenever their contents change.
type Bucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BucketSpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status BucketStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *Bucket) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *Bucket) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval.
func (in *Bucket) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetTimeout returns spec.timeout, 60s when unset.
func (in *Bucket) GetTimeout() time.Duration {
	return timeoutOrDefault(in.Spec.Timeout)
}

// GetArtifact returns the stored artifact, or nil.
func (in *Bucket) GetArtifact() *meta.Artifact {
	return in.Status.Artifact
}

// +kubebuilder:object:root=true

// BucketList is a list of Buckets.
type BucketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Bucket `json:"items"`
}
