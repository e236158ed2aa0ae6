package v1

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Values of spec.type: who calls the webhook, which decides how a request is
// authenticated and its payload read.
const (
	GenericReceiver     = "generic"
	GenericHMACReceiver = "generic-hmac"
	GenericOIDCReceiver = "generic-oidc"
	GitHubReceiver      = "github"
	GitLabReceiver      = "gitlab"
	BitbucketReceiver   = "bitbucket"
	HarborReceiver      = "harbor"
	DockerHubReceiver   = "dockerhub"
	QuayReceiver        = "quay"
	GCRReceiver         = "gcr"
	NexusReceiver       = "nexus"
	ACRReceiver         = "acr"
	CDEventsReceiver    = "cdevents"
)

// WebhookPathPrefix starts every Receiver's webhook path.
const WebhookPathPrefix = "/hook/"

// DefaultReceiverInterval is spec.interval when unset.
const DefaultReceiverInterval = 10 * time.Minute

// ReceiverSpec is what the user asks of a Receiver.
// +kubebuilder:validation:XValidation:rule="self.type != 'generic-oidc' || (has(self.oidcProviders) && size(self.oidcProviders) > 0)",message="generic-oidc receivers must define at least one oidcProvider"
// +kubebuilder:validation:XValidation:rule="self.type == 'generic-oidc' || !has(self.oidcProviders) || size(self.oidcProviders) == 0",message="oidcProviders can only be set when type is generic-oidc"
// +kubebuilder:validation:XValidation:rule="self.type != 'generic-oidc' || !has(self.secretRef)",message="secretRef cannot be set when type is generic-oidc"
// +kubebuilder:validation:XValidation:rule="self.type == 'generic-oidc' || has(self.secretRef)",message="secretRef is required when type is not generic-oidc"
type ReceiverSpec struct {
	// Type is the kind of sender, which decides how requests are verified
	// and payloads parsed.
	// +kubebuilder:validation:Enum=generic;generic-hmac;generic-oidc;github;gitlab;bitbucket;harbor;dockerhub;quay;gcr;nexus;acr;cdevents
	// +required
	Type string `json:"type"`

	// Interval is how often the Receiver is reconciled with the Secret it
	// references. Defaults to 10m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:default="10m"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Events restricts the event types that trigger reconciliation, e.g.
	// "push" for GitHub or "Push Hook" for GitLab; all when empty.
	// +optional
	Events []string `json:"events,omitempty"`

	// Resources are the objects asked to reconcile when a valid request
	// arrives.
	// +required
	Resources []ReceiverResource `json:"resources"`

	// ResourceFilter is a CEL expression returning a bool, evaluated for
	// every object Resources selects; false skips that object. It sees the
	// object as `res`, the request body as `req` and, for generic-oidc, the
	// verified token claims as `claims`.
	// +optional
	ResourceFilter string `json:"resourceFilter,omitempty"`

	// SecretRef names the Secret with the shared "token" (gcr also needs
	// "email" and "audience"). Required for every type except generic-oidc,
	// which must not set it.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// OIDCProviders are the issuers trusted by a generic-oidc Receiver; a
	// request's bearer token must come from one of them and pass all of its
	// validations.
	// +listType=map
	// +listMapKey=issuerURL
	// +optional
	OIDCProviders []OIDCProvider `json:"oidcProviders,omitempty"`

	// Suspend stops the Receiver from acting on requests.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// ReceiverResource selects objects to reconcile, with an optional filter of
// its own.
type ReceiverResource struct {
	CrossNamespaceObjectReference `json:",inline"`

	// Filter is a CEL expression like spec.resourceFilter that applies to
	// this entry only; an object is reconciled when both return true.
	// +optional
	Filter string `json:"filter,omitempty"`
}

// OIDCProvider is an issuer whose tokens a generic-oidc Receiver accepts.
type OIDCProvider struct {
	// IssuerURL is the issuer used for discovery; it must equal the token's
	// "iss" claim.
	// +kubebuilder:validation:Pattern="^https?://"
	// +required
	IssuerURL string `json:"issuerURL"`

	// Audience is the "aud" claim required of tokens. Defaults to
	// "notification-controller".
	// +optional
	Audience string `json:"audience,omitempty"`

	// Variables are named CEL expressions over `claims`, evaluated in order
	// and available to later ones and to Validations as `vars.<name>`.
	// +optional
	Variables []OIDCVariable `json:"variables,omitempty"`

	// Validations must all hold for a request to be accepted. A valid
	// signature alone proves little for public issuers, so at least one
	// expression pinning down the caller's identity is required.
	// +kubebuilder:validation:MinItems=1
	// +required
	Validations []OIDCValidation `json:"validations"`
}

// OIDCVariable is a named CEL expression over token claims.
type OIDCVariable struct {
	// Name of the variable; a CEL identifier.
	// +required
	Name string `json:"name"`

	// Expression computing the value.
	// +required
	Expression string `json:"expression"`
}

// OIDCValidation is a CEL condition a token must satisfy.
type OIDCValidation struct {
	// Expression returning a bool.
	// +required
	Expression string `json:"expression"`

	// Message returned to the caller when Expression is false.
	// +required
	Message string `json:"message"`
}

// ReceiverStatus is what the controller observed.
type ReceiverStatus struct {
	meta.ReconcileRequestStatus `json:",inline"`

	// Conditions: Ready, Reconciling and Stalled.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// WebhookPath is the path, under the receiver server, that the sender
	// must call: /hook/ followed by the hex SHA-256 of token, name and
	// namespace.
	// +optional
	WebhookPath string `json:"webhookPath,omitempty"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=all;fluxcd;fluxcd-notifications
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"

// Receiver turns authenticated webhook calls into reconcile requests for a
// set of Flux objects.
type Receiver struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ReceiverSpec `json:"spec,omitempty"`

	// +kubebuilder:default={"observedGeneration":-1}
	Status ReceiverStatus `json:"status,omitempty"`
}

// WebhookPath returns the path a Receiver with the given token, name and
// namespace is served under. The digest mixes in the token so the path
// cannot be guessed from the object's name alone; the name and namespace
// keep two Receivers sharing a token apart.
func WebhookPath(token, name, namespace string) string {
	sum := sha256.Sum256([]byte(token + name + namespace))
	return WebhookPathPrefix + hex.EncodeToString(sum[:])
}

// GetWebhookPath returns the Receiver's webhook path for token.
func (in *Receiver) GetWebhookPath(token string) string {
	return WebhookPath(token, in.Name, in.Namespace)
}

// GetInterval returns spec.interval, defaulting to 10m.
func (in *Receiver) GetInterval() time.Duration {
	if in.Spec.Interval != nil {
		return in.Spec.Interval.Duration
	}
	return DefaultReceiverInterval
}

// GetRequeueAfter returns the reconcile interval; see GetInterval.
func (in *Receiver) GetRequeueAfter() time.Duration {
	return in.GetInterval()
}

// GetConditions returns status.conditions.
func (in *Receiver) GetConditions() []metav1.Condition {
	return in.Status.Conditions
}

// SetConditions replaces status.conditions.
func (in *Receiver) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// The kind is read and written by the generic condition helpers.
var _ meta.ObjectWithConditions = &Receiver{}

// +kubebuilder:object:root=true

// ReceiverList is a list of Receivers.
type ReceiverList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Receiver `json:"items"`
}
