package v1beta3

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// ProviderKind is the kind name of Provider objects.
const ProviderKind = "Provider"

// Values of spec.type.
const (
	SlackProvider                     = "slack"
	DiscordProvider                   = "discord"
	MSTeamsProvider                   = "msteams"
	RocketProvider                    = "rocket"
	GenericProvider                   = "generic"
	GenericHMACProvider               = "generic-hmac"
	GitHubProvider                    = "github"
	GitLabProvider                    = "gitlab"
	GiteaProvider                     = "gitea"
	GiteaPullRequestCommentProvider   = "giteapullrequestcomment"
	BitbucketServerProvider           = "bitbucketserver"
	BitbucketProvider                 = "bitbucket"
	AzureDevOpsProvider               = "azuredevops"
	GoogleChatProvider                = "googlechat"
	GooglePubSubProvider              = "googlepubsub"
	WebexProvider                     = "webex"
	SentryProvider                    = "sentry"
	AzureEventHubProvider             = "azureeventhub"
	TelegramProvider                  = "telegram"
	LarkProvider                      = "lark"
	MatrixProvider                    = "matrix"
	OpsgenieProvider                  = "opsgenie"
	AlertManagerProvider              = "alertmanager"
	GrafanaProvider                   = "grafana"
	GitHubDispatchProvider            = "githubdispatch"
	GitHubPullRequestCommentProvider  = "githubpullrequestcomment"
	GitLabMergeRequestCommentProvider = "gitlabmergerequestcomment"
	PagerDutyProvider                 = "pagerduty"
	DataDogProvider                   = "datadog"
	NATSProvider                      = "nats"
	ZulipProvider                     = "zulip"
	OTELProvider                      = "otel"
	ZoomProvider                      = "zoom"
	IncidentIOProvider                = "incident.io"
)

// DefaultProviderTimeout is how long sending one notification may take when
// spec.timeout is unset.
const DefaultProviderTimeout = 15 * time.Second

// IsCommitStatusProvider reports whether providerType posts commit statuses
// to a Git host. Those are the only types that accept spec.commitStatusExpr,
// and they need a commit SHA in the event's revision metadata.
func IsCommitStatusProvider(providerType string) bool {
	switch providerType {
	case GitHubProvider, GitLabProvider, GiteaProvider, BitbucketServerProvider,
		BitbucketProvider, AzureDevOpsProvider:
		return true
	}
	return false
}

// ProviderSpec says where and how to deliver notifications.
// +kubebuilder:validation:XValidation:rule="self.type == 'github' || self.type == 'gitlab' || self.type == 'gitea' || self.type == 'bitbucketserver' || self.type == 'bitbucket' || self.type == 'azuredevops' || !has(self.commitStatusExpr)",message="spec.commitStatusExpr is only supported for the 'github', 'gitlab', 'gitea', 'bitbucketserver', 'bitbucket', 'azuredevops' provider types"
type ProviderSpec struct {
	// Type is the service notifications are delivered to.
	// +kubebuilder:validation:Enum=slack;discord;msteams;rocket;generic;generic-hmac;github;gitlab;gitea;giteapullrequestcomment;bitbucketserver;bitbucket;azuredevops;googlechat;googlepubsub;webex;sentry;azureeventhub;telegram;lark;matrix;opsgenie;alertmanager;grafana;githubdispatch;githubpullrequestcomment;gitlabmergerequestcomment;pagerduty;datadog;nats;zulip;otel;zoom;incident.io
	// +required
	Type string `json:"type"`

	// Interval is accepted for compatibility and ignored: Providers are not
	// reconciled periodically in this API version.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Channel is the destination channel, room or topic, where the service
	// has such a notion.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Channel string `json:"channel,omitempty"`

	// Username is the name notifications are posted under, where the
	// service lets the sender choose.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Username string `json:"username,omitempty"`

	// Address is where notifications go: an HTTP(S) URL for webhook-style
	// types, a repository URL for Git hosts, or a project, namespace or
	// subject for others. It can also come from the "address" key of
	// SecretRef.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Address string `json:"address,omitempty"`

	// Timeout bounds the delivery of one notification. Defaults to 15s.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m))+$"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Proxy is the URL of an HTTP(S) proxy. Deprecated: use ProxySecretRef.
	// +kubebuilder:validation:Pattern="^(http|https)://.*$"
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Proxy string `json:"proxy,omitempty"`

	// ProxySecretRef names a Secret with the proxy's "address" and, when it
	// needs authentication, "username" and "password".
	// +optional
	ProxySecretRef *meta.LocalObjectReference `json:"proxySecretRef,omitempty"`

	// SecretRef names a Secret with the credentials for the service, such
	// as "token", "username"/"password", "address" or "headers".
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`

	// ServiceAccountName is a service account whose workload identity is
	// exchanged for cloud credentials (azureeventhub, azuredevops,
	// googlepubsub) instead of static ones in SecretRef. It needs the
	// ObjectLevelWorkloadIdentity feature gate.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// CertSecretRef names a Secret with TLS material: "ca.crt" to trust the
	// server, "tls.crt" and "tls.key" for a client certificate, or both.
	// +optional
	CertSecretRef *meta.LocalObjectReference `json:"certSecretRef,omitempty"`

	// Suspend stops delivery through this Provider.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// CommitStatusExpr is a CEL expression over `event`, `provider` and
	// `alert` that returns the key of the commit status to post. Only for
	// the commit-status types (github, gitlab, gitea, bitbucketserver,
	// bitbucket, azuredevops).
	// +optional
	CommitStatusExpr string `json:"commitStatusExpr,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=all;fluxcd;fluxcd-notifications
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Provider is a destination for the events Alerts forward.
type Provider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProviderSpec `json:"spec,omitempty"`
}

// GetTimeout returns spec.timeout, defaulting to 15s.
func (in *Provider) GetTimeout() time.Duration {
	if in.Spec.Timeout != nil {
		return in.Spec.Timeout.Duration
	}
	return DefaultProviderTimeout
}

// +kubebuilder:object:root=true

// ProviderList is a list of Providers.
type ProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Provider `json:"items"`
}
