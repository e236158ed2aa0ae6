// Package v2 is the helm.toolkit.fluxcd.io/v2 API: the HelmRelease kind,
// which declares a Helm release (chart, values, and how to install,
// upgrade, test, roll back and uninstall it) for the helm controller to
// keep in the state described. The wire format is Flux's, so existing
// HelmRelease manifests and the flux CLI work against weir unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=helm.toolkit.fluxcd.io
package v2
