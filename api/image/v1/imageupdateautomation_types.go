package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// ImageUpdateAutomationSpec says which Git repository to update, where,
// and how to commit and push the changes.
type ImageUpdateAutomationSpec struct {
	// SourceRef names the GitRepository to clone and push to.
	// +required
	SourceRef CrossNamespaceSourceReference `json:"sourceRef"`

	// GitSpec configures checkout, commit and push. Optional in the
	// schema, but needed in practice as Git is the only source kind.
	// +optional
	GitSpec *GitSpec `json:"git,omitempty"`

	// Interval between automation runs, at most one per interval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// PolicySelector selects, by label, the ImagePolicies of the namespace
	// whose images are written; all of them when unset.
	// +optional
	PolicySelector *metav1.LabelSelector `json:"policySelector,omitempty"`

	// Update says how files are updated; the Setters strategy on the whole
	// repository when unset.
	// +kubebuilder:default={"strategy":"Setters"}
	// +optional
	Update *UpdateStrategy `json:"update,omitempty"`

	// Suspend stops further runs until unset.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// UpdateStrategyName names a way of updating files.
// +kubebuilder:validation:Enum=Setters
type UpdateStrategyName string

// UpdateStrategySetters rewrites the YAML fields carrying an $imagepolicy
// setter comment.
const UpdateStrategySetters UpdateStrategyName = "Setters"

// UpdateStrategy picks the update strategy and the directory it works on.
type UpdateStrategy struct {
	// Strategy to use; Setters, the only one.
	// +kubebuilder:default=Setters
	// +optional
	Strategy UpdateStrategyName `json:"strategy,omitempty"`

	// Path is the directory, relative to the repository root, whose files
	// are updated; the root when empty.
	// +optional
	Path string `json:"path,omitempty"`
}

// CrossNamespaceSourceReference names the Git source of an automation.
type CrossNamespaceSourceReference struct {
	// APIVersion of the source; the served version of its kind when empty.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the source; GitRepository, the only one.
	// +kubebuilder:validation:Enum=GitRepository
	// +kubebuilder:default=GitRepository
	// +required
	Kind string `json:"kind"`

	// Name of the source.
	// +required
	Name string `json:"name"`

	// Namespace of the source; the automation's namespace when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// String returns Kind/[namespace/]name.
func (in CrossNamespaceSourceReference) String() string {
	if in.Namespace != "" {
		return in.Kind + "/" + in.Namespace + "/" + in.Name
	}
	return in.Kind + "/" + in.Name
}

// GitSpec holds the Git settings of an automation.
type GitSpec struct {
	// Checkout says what to clone; the GitRepository's own ref when unset.
	// +optional
	Checkout *GitCheckoutSpec `json:"checkout,omitempty"`

	// Commit says how commits are authored, signed and described.
	// +required
	Commit CommitSpec `json:"commit"`

	// Push says where commits go; back to the checked-out branch when
	// unset.
	// +optional
	Push *PushSpec `json:"push,omitempty"`
}

// HasRefspec reports whether a push refspec is configured.
func (in GitSpec) HasRefspec() bool {
	return in.Push != nil && in.Push.Refspec != ""
}

// GitCheckoutSpec names the Git reference to clone.
type GitCheckoutSpec struct {
	// Reference to clone.
	// +required
	Reference GitRepositoryRef `json:"ref"`
}

// GitRepositoryRef is a Git reference in the shape of a GitRepository's
// spec.ref. Precedence: commit, then name, semver, tag, branch; the branch
// is master when nothing is set.
type GitRepositoryRef struct {
	// Branch to check out.
	// +optional
	Branch string `json:"branch,omitempty"`

	// Tag to check out; wins over Branch.
	// +optional
	Tag string `json:"tag,omitempty"`

	// SemVer is a range; the highest matching tag is checked out. Wins over
	// Tag.
	// +optional
	SemVer string `json:"semver,omitempty"`

	// Name is a full reference such as refs/heads/main or
	// refs/pull/420/head; wins over Branch, Tag and SemVer.
	// +optional
	Name string `json:"name,omitempty"`

	// Commit is a SHA to check out; wins over everything else. With
	// Branch, the branch is cloned shallowly and must contain the commit.
	// +optional
	Commit string `json:"commit,omitempty"`
}

// CommitSpec says how the automation commits.
type CommitSpec struct {
	// Author of the commits.
	// +required
	Author CommitUser `json:"author"`

	// SigningKey signs the commits with an OpenPGP or SSH key.
	// +optional
	SigningKey *SigningKey `json:"signingKey,omitempty"`

	// MessageTemplate is a Go template for the commit message, given the
	// automation object and the changes made (.AutomationObject, .Changed).
	// The old .Updated field is gone.
	// +optional
	MessageTemplate string `json:"messageTemplate,omitempty"`

	// MessageTemplateValues are extra values available to the template.
	// +optional
	MessageTemplateValues map[string]string `json:"messageTemplateValues,omitempty"`
}

// CommitUser is the author identity of commits.
type CommitUser struct {
	// Name of the author.
	// +optional
	Name string `json:"name,omitempty"`

	// Email of the author.
	// +required
	Email string `json:"email"`
}

// SigningKeyType is the format of a commit signing key.
// +kubebuilder:validation:Enum=gpg;ssh
type SigningKeyType string

const (
	// SigningKeyTypeGPG reads an ASCII-armoured OpenPGP key pair from key
	// git.asc (passphrase in key passphrase).
	SigningKeyTypeGPG SigningKeyType = "gpg"
	// SigningKeyTypeSSH reads an SSH private key from key identity
	// (passphrase in key password), as GitRepository secrets hold it.
	SigningKeyTypeSSH SigningKeyType = "ssh"
)

// SigningKey points at the Secret with the commit signing key.
type SigningKey struct {
	// SecretRef names the Secret, in the automation's namespace. For gpg it
	// holds git.asc (and optionally passphrase); for ssh it holds identity
	// (and optionally password), so one Secret can serve both Git transport
	// and signing. SSH keys may be ed25519, ECDSA or RSA of 2048 bits or
	// more.
	// +required
	SecretRef meta.LocalObjectReference `json:"secretRef"`

	// Type is gpg (default when empty) or ssh.
	// +optional
	Type SigningKeyType `json:"type,omitempty"`
}

// GetType returns the key type; gpg when unset.
func (in SigningKey) GetType() SigningKeyType {
	if in.Type == "" {
		return SigningKeyTypeGPG
	}
	return in.Type
}

// PushSpec says where commits are pushed.
type PushSpec struct {
	// Branch to push to, created from the checked-out branch if missing.
	// +optional
	Branch string `json:"branch,omitempty"`

	// Refspec to push with; with Branch also set, both pushes happen.
	// +optional
	Refspec string `json:"refspec,omitempty"`

	// Options are push options (git push -o) sent to the server.
	// +optional
	Options map[string]string `json:"options,omitempty"`
}

// ObservedPolicies maps the name of each policy an automation run applied
// to the image it had elected.
type ObservedPolicies map[string]ImageRef

// ImageUpdateAutomationStatus is the observed state of an automation.
type ImageUpdateAutomationStatus struct {
	// LastAutomationRunTime is when the last run completed, whether or not
	// it changed anything.
	// +optional
	LastAutomationRunTime *metav1.Time `json:"lastAutomationRunTime,omitempty"`

	// LastPushCommit is the SHA of the last commit pushed.
	// +optional
	LastPushCommit string `json:"lastPushCommit,omitempty"`

	// LastPushTime is when the last push happened.
	// +optional
	LastPushTime *metav1.Time `json:"lastPushTime,omitempty"`

	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedPolicies are the policies, and their images, the last run
	// took into account.
	// +optional
	ObservedPolicies ObservedPolicies `json:"observedPolicies,omitempty"`

	// ObservedSourceRevision is the source revision the last run worked
	// on, to notice new commits.
	// +optional
	ObservedSourceRevision string `json:"observedSourceRevision,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=iua;imgupd;imgauto,categories=all;fluxcd;fluxcd-images
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"
// +kubebuilder:printcolumn:name="Last run",type="string",JSONPath=".status.lastAutomationRunTime",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"

// ImageUpdateAutomation writes the images elected by ImagePolicies into
// the manifests of a Git repository, then commits and pushes.
type ImageUpdateAutomation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ImageUpdateAutomationSpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status ImageUpdateAutomationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ImageUpdateAutomationList is a list of ImageUpdateAutomation objects.
type ImageUpdateAutomationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImageUpdateAutomation `json:"items"`
}

// GetConditions returns the status conditions.
func (in *ImageUpdateAutomation) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *ImageUpdateAutomation) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval.
func (in *ImageUpdateAutomation) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetUpdateStrategy returns spec.update, or the default (Setters on the
// repository root) when unset.
func (in *ImageUpdateAutomation) GetUpdateStrategy() UpdateStrategy {
	if in.Spec.Update == nil {
		return UpdateStrategy{Strategy: UpdateStrategySetters}
	}
	u := *in.Spec.Update
	if u.Strategy == "" {
		u.Strategy = UpdateStrategySetters
	}
	return u
}
