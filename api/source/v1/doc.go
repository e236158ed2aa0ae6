// Package v1 holds the source.toolkit.fluxcd.io/v1 API: the kinds that turn
// something outside the cluster (a Git repository, an OCI artifact, an object
// storage bucket, a Helm repository index or chart) into a versioned tarball
// that weir stores and serves to the other controllers, plus ExternalArtifact,
// through which third-party producers publish artifacts in the same shape.
//
// Every kind implements Source, so a consumer (Kustomization, HelmRelease,
// ArtifactGenerator) can read the artifact and polling interval of whatever
// it points at without knowing its kind.
//
// +kubebuilder:object:generate=true
// +groupName=source.toolkit.fluxcd.io
package v1
