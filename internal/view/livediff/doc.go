// Package livediff says what applying a render would change in the
// cluster: every object server-side dry-run as its controller applies it
// (field manager kustomize-controller or helm-controller, a
// Kustomization's owner labels) and compared with the live object by
// internal/apply/ssa (a unified diff, Secret values masked), and what would be
// deleted (a Kustomization's prune, the objects a Helm upgrade drops).
// `weir diff kustomization|helmrelease` print its Result; the UI serves
// it as JSON.
package livediff
