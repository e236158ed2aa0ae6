// Package v1 is the notification.toolkit.fluxcd.io/v1 API: the Receiver,
// which exposes a webhook that outside systems (Git hosts, registries, CI)
// call to make named Flux objects reconcile at once instead of waiting for
// their interval. It also holds the object reference type that v1beta3
// Alerts use for their event sources.
//
// +kubebuilder:object:generate=true
// +groupName=notification.toolkit.fluxcd.io
package v1
