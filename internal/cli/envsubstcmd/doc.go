// Package envsubstcmd implements `weir envsubst`: substitute environment
// variables in the text read from stdin, line by line as `flux envsubst`
// does, with the expansion engine the Kustomization controller runs for
// spec.postBuild (internal/kustomize), so ${var:=default} and the other
// forms mean the same in both.
package envsubstcmd
