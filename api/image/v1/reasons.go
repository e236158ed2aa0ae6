package v1

// Kind names of this group, and of the source kind an automation pushes to.
const (
	ImageRepositoryKind       = "ImageRepository"
	ImagePolicyKind           = "ImagePolicy"
	ImageUpdateAutomationKind = "ImageUpdateAutomation"
	GitRepositoryKind         = "GitRepository"
)

// Condition reasons of ImageRepository and ImagePolicy (the image reflector).
const (
	// ImageURLInvalidReason: spec.image is not a valid repository reference.
	ImageURLInvalidReason string = "ImageURLInvalid"

	// DependencyNotReadyReason: the ImageRepository a policy reads has not
	// been scanned successfully yet.
	DependencyNotReadyReason string = "DependencyNotReady"

	// AuthenticationFailedReason: the registry credentials are missing,
	// malformed or rejected.
	AuthenticationFailedReason string = "AuthenticationFailed"

	// ReadOperationFailedReason: the scanned tags could not be read back
	// from storage.
	ReadOperationFailedReason string = "ReadOperationFailed"

	// IntervalNotConfiguredReason: a digest-refreshing policy has no
	// interval.
	IntervalNotConfiguredReason string = "IntervalNotConfigured"
)

// Condition reasons of ImageUpdateAutomation (the image automation).
const (
	// InvalidUpdateStrategyReason: spec.update names no usable strategy.
	InvalidUpdateStrategyReason string = "InvalidUpdateStrategy"

	// InvalidSourceConfigReason: the source reference or its Git settings
	// cannot be used.
	InvalidSourceConfigReason string = "InvalidSourceConfiguration"

	// SourceManagerFailedReason: the Git working copy could not be prepared.
	SourceManagerFailedReason string = "SourceManagerFailed"

	// GitOperationFailedReason: a clone, commit or push failed.
	GitOperationFailedReason string = "GitOperationFailed"

	// UpdateFailedReason: rewriting the manifests failed.
	UpdateFailedReason string = "UpdateFailed"

	// InvalidPolicySelectorReason: spec.policySelector is not a valid
	// label selector.
	InvalidPolicySelectorReason string = "InvalidPolicySelector"

	// RemovedTemplateFieldReason: the commit message template uses a field
	// that no longer exists (such as .Updated).
	RemovedTemplateFieldReason string = "RemovedTemplateField"
)

// Setter markers. The automation rewrites a YAML scalar whose line comment
// is a JSON object with the key SetterShortHand, for example
//
//	image: ghcr.io/org/app:1.0.0 # {"$imagepolicy": "flux-system:app"}
//
// The value is <namespace>:<policy>, replacing the whole image reference,
// or <namespace>:<policy>:<part> with part one of the Setter*Suffix values,
// replacing only that part.
const (
	// SetterShortHand is the marker key.
	SetterShortHand = "$imagepolicy"

	// SetterNameSuffix replaces only the image name (without tag).
	SetterNameSuffix = "name"
	// SetterTagSuffix replaces only the tag.
	SetterTagSuffix = "tag"
	// SetterDigestSuffix replaces only the digest.
	SetterDigestSuffix = "digest"
)
