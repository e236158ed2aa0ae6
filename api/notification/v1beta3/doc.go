// Package v1beta3 is the notification.toolkit.fluxcd.io/v1beta3 API: Alerts,
// which pick the events of Flux objects worth forwarding, and Providers, which
// say where to forward them (chat, Git commit statuses, incident tools,
// generic webhooks). Both are static configuration: the controller reads them
// when an event arrives and keeps no status on them.
//
// +kubebuilder:object:generate=true
// +groupName=notification.toolkit.fluxcd.io
package v1beta3
