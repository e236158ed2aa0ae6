// Package v1 is the image.toolkit.fluxcd.io/v1 API: ImageRepository (a
// container repository whose tags are scanned), ImagePolicy (the rule that
// picks the latest of those tags) and ImageUpdateAutomation (which writes
// the picked images back into a Git repository at the places marked with
// an $imagepolicy setter comment). The wire format is Flux's.
//
// +kubebuilder:object:generate=true
// +groupName=image.toolkit.fluxcd.io
package v1
