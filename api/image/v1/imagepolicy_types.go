package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// DefaultDigestRefreshInterval is how often an Always-reflecting policy
// re-reads the digest of its latest tag when spec.interval is unset.
const DefaultDigestRefreshInterval = 10 * time.Minute

// ImagePolicySpec says how to pick the latest image of a repository.
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || (has(self.digestReflectionPolicy) && self.digestReflectionPolicy == 'Always')",message="spec.interval is only accepted when spec.digestReflectionPolicy is set to 'Always'"
// +kubebuilder:validation:XValidation:rule="has(self.interval) || !has(self.digestReflectionPolicy) || self.digestReflectionPolicy != 'Always'",message="spec.interval must be set when spec.digestReflectionPolicy is set to 'Always'"
type ImagePolicySpec struct {
	// ImageRepositoryRef names the scanned ImageRepository; in another
	// namespace only if its accessFrom allows it.
	// +required
	ImageRepositoryRef meta.NamespacedObjectReference `json:"imageRepositoryRef"`

	// Policy is the ordering rule that elects the latest tag.
	// +required
	Policy ImagePolicyChoice `json:"policy"`

	// FilterTags narrows the tags considered; all tags when unset.
	// +optional
	FilterTags *TagFilter `json:"filterTags,omitempty"`

	// DigestReflectionPolicy governs status.latestRef.digest: Never (the
	// default) leaves it empty, IfNotPresent sets it once for an elected
	// tag and keeps it while the tag stays elected, Always re-reads it
	// every spec.interval.
	// +kubebuilder:default:=Never
	// +optional
	DigestReflectionPolicy ReflectionPolicy `json:"digestReflectionPolicy,omitempty"`

	// Interval between digest refreshes. Allowed, and required, only with
	// the Always reflection policy.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Suspend stops further evaluation of the policy.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// ReflectionPolicy says when a value read from the registry is written to
// the status.
// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
type ReflectionPolicy string

const (
	// ReflectAlways keeps the value current, overwriting what is there.
	ReflectAlways ReflectionPolicy = "Always"
	// ReflectIfNotPresent writes the value only when the field is empty.
	ReflectIfNotPresent ReflectionPolicy = "IfNotPresent"
	// ReflectNever never writes the value.
	ReflectNever ReflectionPolicy = "Never"
)

// ImagePolicyChoice holds one ordering rule; set exactly one field.
type ImagePolicyChoice struct {
	// SemVer elects the highest tag within a semver range.
	// +optional
	SemVer *SemVerPolicy `json:"semver,omitempty"`

	// Alphabetical elects by alphabetical order of the tags.
	// +optional
	Alphabetical *AlphabeticalPolicy `json:"alphabetical,omitempty"`

	// Numerical elects by numerical value of the tags.
	// +optional
	Numerical *NumericalPolicy `json:"numerical,omitempty"`
}

// SemVerPolicy elects the highest version within Range.
type SemVerPolicy struct {
	// Range is a semver constraint such as ">=1.0.0 <2.0.0" or "5.0.x".
	// +required
	Range string `json:"range"`
}

// Sort orders of the alphabetical and numerical policies.
const (
	OrderAsc  = "asc"
	OrderDesc = "desc"
)

// AlphabeticalPolicy elects the last tag in the chosen order: asc
// (default) elects the greatest, desc the smallest.
type AlphabeticalPolicy struct {
	// Order is asc (default) or desc.
	// +kubebuilder:default:="asc"
	// +kubebuilder:validation:Enum=asc;desc
	// +optional
	Order string `json:"order,omitempty"`
}

// NumericalPolicy elects the last tag in the chosen numerical order: asc
// (default) elects the largest number, desc the smallest.
type NumericalPolicy struct {
	// Order is asc (default) or desc.
	// +kubebuilder:default:="asc"
	// +kubebuilder:validation:Enum=asc;desc
	// +optional
	Order string `json:"order,omitempty"`
}

// TagFilter keeps only tags matching Pattern, optionally rewriting each to
// Extract before ordering.
type TagFilter struct {
	// Pattern is a regular expression a tag must match.
	// +optional
	Pattern string `json:"pattern"`

	// Extract is the replacement template, using Pattern's capture groups
	// (such as $ts), whose result is what the policy orders.
	// +optional
	Extract string `json:"extract"`
}

// ImageRef is one image: repository name, tag and, optionally, digest.
type ImageRef struct {
	// Name is the repository, without tag or digest.
	// +required
	Name string `json:"name"`

	// Tag of the image.
	// +required
	Tag string `json:"tag"`

	// Digest of the image, when reflected.
	// +optional
	Digest string `json:"digest,omitempty"`
}

// String returns name:tag, followed by @digest when the digest is known.
func (in *ImageRef) String() string {
	s := in.Name + ":" + in.Tag
	if in.Digest != "" {
		s += "@" + in.Digest
	}
	return s
}

// ImagePolicyStatus is the observed state of an ImagePolicy.
type ImagePolicyStatus struct {
	// LatestRef is the image the policy elected.
	// +optional
	LatestRef *ImageRef `json:"latestRef,omitempty"`

	// ObservedPreviousRef is the image elected before LatestRef, so a
	// change can be reported.
	// +optional
	ObservedPreviousRef *ImageRef `json:"observedPreviousRef,omitempty"`

	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=imgpol;imagepol,categories=all;fluxcd;fluxcd-images
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".status.latestRef.name"
// +kubebuilder:printcolumn:name="Tag",type="string",JSONPath=".status.latestRef.tag"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// ImagePolicy elects the latest image of an ImageRepository by a rule.
type ImagePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ImagePolicySpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status ImagePolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ImagePolicyList is a list of ImagePolicy objects.
type ImagePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImagePolicy `json:"items"`
}

// GetConditions returns the status conditions.
func (in *ImagePolicy) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *ImagePolicy) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetDigestReflectionPolicy returns spec.digestReflectionPolicy, or Never.
func (in *ImagePolicy) GetDigestReflectionPolicy() ReflectionPolicy {
	if in.Spec.DigestReflectionPolicy == "" {
		return ReflectNever
	}
	return in.Spec.DigestReflectionPolicy
}

// GetInterval returns how often the digest is refreshed: spec.interval (or
// 10m) under the Always reflection policy, zero otherwise.
func (in *ImagePolicy) GetInterval() time.Duration {
	if in.GetDigestReflectionPolicy() != ReflectAlways {
		return 0
	}
	if in.Spec.Interval == nil || in.Spec.Interval.Duration == 0 {
		return DefaultDigestRefreshInterval
	}
	return in.Spec.Interval.Duration
}

// GetRequeueAfter returns GetInterval: a policy is otherwise re-evaluated
// only when its ImageRepository changes, so zero means no periodic requeue.
func (in *ImagePolicy) GetRequeueAfter() time.Duration {
	return in.GetInterval()
}
