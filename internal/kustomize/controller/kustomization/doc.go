// Package kustomization is the Kustomization reconciler: it fetches the
// artifact of the referenced source (shared among builds by
// internal/kustomize/sharedtree), builds it with internal/kustomize
// (variables, decryption; the last build of each is kept by
// internal/kustomize/buildcache), applies the result with internal/apply/ssa in stages
// (skipping the dry-run of objects nobody wrote since, by the memo of
// internal/kustomize/applymemo, kept across restarts in Secrets),
// records what it applied in status.inventory, prunes what left the build,
// waits for health, and orders Kustomizations by spec.dependsOn with Flux's
// rules.
//
// # Phases
//
// Reconcile runs the shared skeleton (internal/runtime/reconcile) with these
// phases, each of which returns a typed error (internal/runtime/errs) that
// carries the Ready reason and the queue's reaction:
//
//  1. Resolve the source (ArtifactFailed; AccessDenied under
//     --no-cross-namespace-refs). No artifact yet: wait --requeue-dependency.
//  2. Check dependencies (DependencyNotReady, wait --requeue-dependency; a
//     dependency cycle also marks Stalled). A dependency is ready when its
//     Ready condition is True at its generation and, when it builds from the
//     same source, it has applied the source's current revision: a dependent
//     never builds revision N before its dependencies applied N. A health
//     check parked by an earlier run of this generation and revision resumes
//     before this step: its apply passed the gate already.
//  3. Download the artifact, verify its digest, extract it under a bound
//     (ArtifactFailed; a 404 waits for the source's next artifact).
//  4. Build: substituteFrom variables, kustomize build, decryption,
//     substitution (BuildFailed). Nothing has touched the cluster yet.
//  5. Apply in stages with server-side apply (ReconciliationFailed).
//  6. Prune what the previous inventory holds and the build no longer does
//     (PruneFailed).
//  7. Health checks: spec.wait or spec.healthChecks (HealthCheckFailed).
//
// A failure before step 5 changes nothing in the cluster: the previous
// objects stay as they are, and nothing is pruned.
//
// # Following dependencies at once
//
// Flux re-checks a blocked dependent every --requeue-dependency (30 s), so a
// chain of ten Kustomizations on one commit takes minutes to roll out. weir
// indexes Kustomizations by the objects their dependsOn names and watches
// Kustomization status: when a dependency's readiness or applied revision
// changes, its dependents are queued immediately. The periodic re-check stays
// as a safety net. Sources are watched the same way, so a new artifact
// reaches every Kustomization built from it without waiting for its interval.
package kustomization
