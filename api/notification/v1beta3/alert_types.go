package v1beta3

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
)

// AlertKind is the kind name of Alert objects.
const AlertKind = "Alert"

// Values of spec.eventSeverity, which are also the severities events carry.
const (
	// EventSeverityInfo forwards every event; it is the default.
	EventSeverityInfo = "info"
	// EventSeverityError forwards error events only.
	EventSeverityError = "error"
)

// AlertSpec says which events to forward and to which Provider.
type AlertSpec struct {
	// ProviderRef names the Provider, in the Alert's namespace, that
	// receives the events.
	// +required
	ProviderRef meta.LocalObjectReference `json:"providerRef"`

	// EventSeverity is the lowest severity forwarded: "info" (the default)
	// lets everything through, "error" only errors.
	// +kubebuilder:validation:Enum=info;error
	// +kubebuilder:default=info
	// +optional
	EventSeverity string `json:"eventSeverity,omitempty"`

	// EventSources selects the objects whose events are forwarded.
	// +required
	EventSources []notificationv1.CrossNamespaceObjectReference `json:"eventSources"`

	// InclusionList holds Go regular expressions; when set, only events
	// whose message matches one of them are forwarded.
	// +optional
	InclusionList []string `json:"inclusionList,omitempty"`

	// EventMetadata is added to the metadata of every forwarded event. It
	// never replaces a key the event already has.
	// +optional
	EventMetadata map[string]string `json:"eventMetadata,omitempty"`

	// ExclusionList holds Go regular expressions; events whose message
	// matches one of them are dropped. It wins over InclusionList.
	// +optional
	ExclusionList []string `json:"exclusionList,omitempty"`

	// Summary is a short text added to every event, e.g. naming the
	// cluster. Deprecated in favour of EventMetadata.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Summary string `json:"summary,omitempty"`

	// Suspend stops the Alert from forwarding events.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=all;fluxcd;fluxcd-notifications
// +kubebuilder:metadata:annotations="kustomize.toolkit.fluxcd.io/substitute=disabled"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// Alert forwards selected events of Flux objects to a Provider.
type Alert struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AlertSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// AlertList is a list of Alerts.
type AlertList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Alert `json:"items"`
}
