package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Authentication providers for spec.provider of a GitRepository.
const (
	// GitProviderGeneric authenticates with what spec.secretRef holds.
	GitProviderGeneric string = "generic"
	// GitProviderAWS uses AWS workload identity (CodeCommit).
	GitProviderAWS string = "aws"
	// GitProviderAzure uses Azure workload identity (Azure DevOps).
	GitProviderAzure string = "azure"
	// GitProviderGitHub authenticates as a GitHub App whose ID, installation
	// and private key are in spec.secretRef.
	GitProviderGitHub string = "github"
)

// DefaultGitBranch is checked out when spec.ref names nothing at all.
const DefaultGitBranch = "master"

// GitVerificationMode says which Git objects must carry a trusted signature.
type GitVerificationMode string

const (
	// ModeGitHEAD verifies the commit that was checked out.
	ModeGitHEAD GitVerificationMode = "HEAD"
	// ModeGitTag verifies the annotated tag named in spec.ref.
	ModeGitTag GitVerificationMode = "Tag"
	// ModeGitTagAndHEAD verifies both the tag and the commit it points at.
	ModeGitTagAndHEAD GitVerificationMode = "TagAndHEAD"
)

// Valid reports whether m is one of the canonical modes (the legacy "head"
// spelling is not).
func (m GitVerificationMode) Valid() bool {
	switch m {
	case ModeGitHEAD, ModeGitTag, ModeGitTagAndHEAD:
		return true
	}
	return false
}

// GitRepositorySpec says which repository to clone, which reference to check
// out and how to package it.
// +kubebuilder:validation:XValidation:rule="!has(self.serviceAccountName) || (has(self.provider) && (self.provider == 'azure' || self.provider == 'aws'))",message="serviceAccountName can only be set when provider is 'azure' or 'aws'"
type GitRepositorySpec struct {
	// URL of the repository, over HTTP(S) or SSH.
	// +kubebuilder:validation:Pattern="^(http|https|ssh)://.*$"
	// +required
	URL string `json:"url"`

	// SecretRef names a Secret with the credentials for URL: username and
	// password or bearerToken for HTTPS, identity and known_hosts for SSH,
	// GitHub App keys for the github provider, and optionally a CA.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// Provider picks how to authenticate: generic (the Secret), or the
	// workload identity of aws or azure, or a GitHub App (github). Empty
	// means generic.
	// +kubebuilder:validation:Enum=generic;aws;azure;github
	// +optional
	Provider string `json:"provider,omitempty"`

	// ServiceAccountName is the ServiceAccount whose workload identity is
	// used; only allowed with the aws and azure providers.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// Interval between two checks of the remote for new commits. The
	// controller may add a little jitter.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +required
	Interval metav1.Duration `json:"interval"`

	// Timeout bounds one clone or fetch; 60s by default.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Reference is the branch, tag, semver range, ref name or commit to
	// follow; the master branch when omitted.
	// +optional
	Reference *GitRepositoryRef `json:"ref,omitempty"`

	// Verification asks for the checked-out commit or tag to be signed by a
	// trusted key.
	// +optional
	Verification *GitRepositoryVerification `json:"verify,omitempty"`

	// ProxySecretRef names a Secret with address, and optionally username
	// and password, of an HTTP(S) proxy to reach the Git server through.
	// +optional
	ProxySecretRef *meta.LocalObjectReference `json:"proxySecretRef,omitempty"`

	// Ignore replaces the built-in exclusion list with patterns in
	// .gitignore syntax; files matching them are left out of the artifact.
	// +optional
	Ignore *string `json:"ignore,omitempty"`

	// Suspend stops reconciliation while true.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// RecurseSubmodules also clones every submodule.
	// +optional
	RecurseSubmodules bool `json:"recurseSubmodules,omitempty"`

	// Include copies parts of other GitRepositories' artifacts into this
	// one's.
	// +optional
	Include []GitRepositoryInclude `json:"include,omitempty"`

	// SparseCheckout limits the checkout to these directories.
	// +optional
	SparseCheckout []string `json:"sparseCheckout,omitempty"`
}

// GitRepositoryInclude copies a directory of another GitRepository's
// artifact into this one's.
type GitRepositoryInclude struct {
	// GitRepositoryRef names the GitRepository, in the same namespace.
	// +required
	GitRepositoryRef meta.LocalObjectReference `json:"repository"`

	// FromPath is the directory to copy from; the artifact's root if empty.
	// +optional
	FromPath string `json:"fromPath,omitempty"`

	// ToPath is where the copy lands; the included repository's name if
	// empty.
	// +optional
	ToPath string `json:"toPath,omitempty"`
}

// GetFromPath returns the directory to copy from.
func (in *GitRepositoryInclude) GetFromPath() string {
	return in.FromPath
}

// GetToPath returns where the copy lands, defaulting to the included
// repository's name.
func (in *GitRepositoryInclude) GetToPath() string {
	if in.ToPath == "" {
		return in.GitRepositoryRef.Name
	}
	return in.ToPath
}

// GitRepositoryRef is what to check out. When several fields are set the
// most precise wins: Commit, then Name, then SemVer, then Tag, then Branch.
// Branch together with Commit clones that branch shallowly and expects the
// commit on it.
type GitRepositoryRef struct {
	// Branch to follow; master when no other field is set.
	// +optional
	Branch string `json:"branch,omitempty"`

	// Tag to check out.
	// +optional
	Tag string `json:"tag,omitempty"`

	// SemVer is a version range; the highest matching tag is checked out.
	// +optional
	SemVer string `json:"semver,omitempty"`

	// Name is a full reference such as refs/heads/main, refs/tags/v1.0.0
	// or refs/pull/42/head.
	// +optional
	Name string `json:"name,omitempty"`

	// Commit is the SHA to check out.
	// +optional
	Commit string `json:"commit,omitempty"`
}

// IsZero reports whether the reference names nothing.
func (in *GitRepositoryRef) IsZero() bool {
	return in == nil || *in == GitRepositoryRef{}
}

// GitRepositoryVerification configures signature checks on what is checked
// out.
type GitRepositoryVerification struct {
	// Mode says what must be signed: HEAD (the commit), Tag, or TagAndHEAD.
	// "head" is accepted as an old spelling of HEAD.
	// +kubebuilder:validation:Enum=head;HEAD;Tag;TagAndHEAD
	// +kubebuilder:default=HEAD
	// +optional
	Mode GitVerificationMode `json:"mode,omitempty"`

	// SecretRef names a Secret whose values are the trusted public keys:
	// PGP keys (*.asc) or SSH keys (*.sshpub).
	// +required
	SecretRef meta.LocalObjectReference `json:"secretRef"`
}

// GetMode returns the canonical mode, mapping "head" and anything unknown
// to HEAD.
func (in *GitRepositoryVerification) GetMode() GitVerificationMode {
	if in.Mode.Valid() {
		return in.Mode
	}
	return ModeGitHEAD
}

// VerifyHEAD reports whether the checked-out commit must be verified.
func (in *GitRepositoryVerification) VerifyHEAD() bool {
	m := in.GetMode()
	return m == ModeGitHEAD || m == ModeGitTagAndHEAD
}

// VerifyTag reports whether the tag must be verified.
func (in *GitRepositoryVerification) VerifyTag() bool {
	m := in.GetMode()
	return m == ModeGitTag || m == ModeGitTagAndHEAD
}

// GitRepositoryStatus is what the controller last observed and stored.
type GitRepositoryStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions of the object: Ready, Reconciling, Stalled and the source
	// conditions.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Artifact is the tarball of the last successful checkout.
	// +optional
	Artifact *meta.Artifact `json:"artifact,omitempty"`

	// IncludedArtifacts are the artifacts of the included repositories that
	// went into Artifact, in the order of spec.include.
	// +optional
	IncludedArtifacts []*meta.Artifact `json:"includedArtifacts,omitempty"`

	// ObservedIgnore is the spec.ignore that Artifact was built with.
	// +optional
	ObservedIgnore *string `json:"observedIgnore,omitempty"`

	// ObservedRecurseSubmodules is the spec.recurseSubmodules that Artifact
	// was built with.
	// +optional
	ObservedRecurseSubmodules bool `json:"observedRecurseSubmodules,omitempty"`

	// ObservedInclude is the spec.include that Artifact was built with.
	// +optional
	ObservedInclude []GitRepositoryInclude `json:"observedInclude,omitempty"`

	// ObservedSparseCheckout is the spec.sparseCheckout that Artifact was
	// built with.
	// +optional
	ObservedSparseCheckout []string `json:"observedSparseCheckout,omitempty"`

	// SourceVerificationMode is the mode the last verification ran with.
	// +optional
	SourceVerificationMode *GitVerificationMode `json:"sourceVerificationMode,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gitrepo,categories=all;fluxcd;fluxcd-sources
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`

// GitRepository follows a reference in a Git repository and stores each new
// commit it resolves to as a tarball artifact.
type GitRepository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GitRepositorySpec `json:"spec,omitempty"`
	// +kubebuilder:default={"observedGeneration":-1}
	Status GitRepositoryStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *GitRepository) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces the status conditions.
func (in *GitRepository) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// GetRequeueAfter returns spec.interval.
func (in *GitRepository) GetRequeueAfter() time.Duration {
	return in.Spec.Interval.Duration
}

// GetTimeout returns spec.timeout, 60s when unset.
func (in *GitRepository) GetTimeout() time.Duration {
	return timeoutOrDefault(in.Spec.Timeout)
}

// GetArtifact returns the stored artifact, or nil.
func (in *GitRepository) GetArtifact() *meta.Artifact {
	return in.Status.Artifact
}

// GetReference returns the reference to check out, with the default branch
// filled in when spec.ref names nothing.
func (in *GitRepository) GetReference() GitRepositoryRef {
	if in.Spec.Reference.IsZero() {
		return GitRepositoryRef{Branch: DefaultGitBranch}
	}
	return *in.Spec.Reference
}

// GetProvider returns spec.provider, generic when unset.
func (in *GitRepository) GetProvider() string {
	if in.Spec.Provider == "" {
		return GitProviderGeneric
	}
	return in.Spec.Provider
}

// +kubebuilder:object:root=true

// GitRepositoryList is a list of GitRepositories.
type GitRepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GitRepository `json:"items"`
}
