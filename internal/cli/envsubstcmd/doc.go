// Package envsubstcmd implements `weir envsubst`: substitute environment
// variables in the YAML read from stdin, with the expansion engine the
// Kustomization controller runs for spec.postBuild (internal/kustomize), so
// the result is what the controller would produce from the same variables.
package envsubstcmd
