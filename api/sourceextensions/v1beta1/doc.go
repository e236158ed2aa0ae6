// Package v1beta1 is the source.extensions.fluxcd.io/v1beta1 API: the
// ArtifactGenerator, which composes files from one or more source artifacts
// into new ExternalArtifacts, or splits one source into several, so that
// consumers reconcile only when the files they use change.
//
// +kubebuilder:object:generate=true
// +groupName=source.extensions.fluxcd.io
package v1beta1
