// Package meta holds the types and wire-visible names that every weir API
// group shares: condition types and reasons, annotations, labels, the
// finalizer, field managers, the Artifact a source produces, and the small
// reference types that point from one object to another.
//
// Every string constant here is part of the wire contract with Flux: the
// upstream flux CLI, dashboards and alerting rules match on them, so they are
// spelled exactly as Flux spells them and defined once, here.
//
// +kubebuilder:object:generate=true
package meta
