package v1

import "github.com/weir-gitops/weir/api/meta"

// Signature verification providers for spec.verify.provider.
const (
	// VerificationProviderCosign checks Sigstore cosign signatures, with
	// keys or keyless.
	VerificationProviderCosign string = "cosign"
	// VerificationProviderNotation checks Notary Project signatures.
	VerificationProviderNotation string = "notation"
)

// OCIVerification asks for an OCI artifact's signature to be checked before
// it is stored. HelmChart uses it as is; OCIRepository extends it.
type OCIVerification struct {
	// Provider is the signing technology: cosign (default) or notation.
	// +kubebuilder:validation:Enum=cosign;notation
	// +kubebuilder:default=cosign
	// +required
	Provider string `json:"provider"`

	// SecretRef names a Secret with the trusted public keys (cosign) or
	// certificates and trust policy (notation). Without it, cosign checks
	// keyless signatures.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// MatchOIDCIdentity restricts keyless signatures to certificates whose
	// issuer and subject match one of these pairs of regular expressions.
	// +optional
	MatchOIDCIdentity []OIDCIdentityMatch `json:"matchOIDCIdentity,omitempty"`
}

// OCIRepositoryVerification is OCIVerification plus a custom Sigstore trust
// root, for signatures made against self-hosted Fulcio and Rekor.
type OCIRepositoryVerification struct {
	OCIVerification `json:",inline"`

	// TrustedRootSecretRef names a Secret whose trusted_root.json key holds
	// the Sigstore trust root to verify against instead of the public one.
	// +optional
	TrustedRootSecretRef *meta.LocalObjectReference `json:"trustedRootSecretRef,omitempty"`
}

// OIDCIdentityMatch is one accepted signer identity of a keyless signature.
// Both fields are Go regular expressions matched against the Fulcio
// certificate.
type OIDCIdentityMatch struct {
	// Issuer matches the OIDC issuer.
	// +required
	Issuer string `json:"issuer"`

	// Subject matches the identity subject.
	// +required
	Subject string `json:"subject"`
}
