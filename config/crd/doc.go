// Package crd embeds the CustomResourceDefinitions generated from weir's API
// types (make generate writes them to bases/) and hands them to the
// installer, the test environment and `weir dev` as typed objects, labelled
// the way Flux labels its own so that tools written for Flux find them.
package crd
