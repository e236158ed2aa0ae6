// Package v1 is the kustomize.toolkit.fluxcd.io/v1 API: the Kustomization,
// which builds a directory of a source artifact with kustomize, post-processes
// the result (substitution, decryption) and applies it to a cluster with
// server-side apply, pruning what a later revision drops.
//
// The names and wire format are Flux's, so Flux repositories and the flux CLI
// work against weir unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=kustomize.toolkit.fluxcd.io
package v1
