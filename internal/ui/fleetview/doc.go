// Package fleetview turns every toolkit object of a cluster into what the
// UI's overview and graph pages show: one Summary per object (its state by
// one rule), counts per kind and state, the objects that need attention,
// who suspended what and why, and the graph of sources, Kustomizations and
// HelmReleases with their dependsOn edges, laid out in layers, with the
// reason a chain is waiting.
//
// It reads with the requesting user's client (one List per kind, never a
// GET per object), decoding the lists without what no page shows (the
// inventories; design 0042), and computes the rest with pure functions,
// so that a fleet of thousands of objects costs thirteen requests; the
// overview's table is sorted here and served a page at a time (Page).
package fleetview
