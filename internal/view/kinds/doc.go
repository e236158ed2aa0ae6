// Package kinds is weir's registry of Flux kinds, shared by the CLI and the UI: for each, the nouns the
// flux CLI uses for it on the command line and in messages ("source git",
// "kustomization"), its group, version and kind, the revision its table shows,
// what `reconcile` reports on success, and Flux's rule for calling an object
// ready. Every verb builds its subcommands from this one list
// (internal/cli/kindcmd lays them out), so a kind is added in one place.
//
// Objects are read as unstructured: the verbs treat all kinds alike, print
// them as the API server returns them, and keep working against a cluster
// that runs Flux's own controllers.
package kinds
