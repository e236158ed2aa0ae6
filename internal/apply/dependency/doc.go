// Package dependency owns spec.dependsOn for every kind that has it
// (Kustomization, HelmRelease): resolving a reference, Flux's readiness
// rule (the built-in check, readyExpr in CEL and the
// AdditiveCELDependencyCheck gate), naming a cycle, and the dependents
// index and watch that queue a dependent the moment its dependency becomes
// ready, so that no dependent waits for --requeue-dependency.
//
// A kind describes itself once in a Kind value; the controllers keep only
// what differs: the message for a missing dependency, and the
// Kustomization's extra revision check.
package dependency
