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
// # The run's record and its one ending
//
// The skeleton passes one record from Begin to Status and Events
// (outcome.go); each phase leaves its result in a field of its own:
// sourceResult (revision), buildResult (attempted, checksum), applyResult
// (change sets, inventory), healthResult (passed, how long, and for a
// resumed wait the apply it ends), beside what the run started from
// (beginning) and the progress it reported (progress). Status decides the
// ending once (reconciler.go: quiet or full, and how long the work took)
// and Events follows that decision; applyStatus (status.go) and quietEnd
// (quiet.go) are pure functions of the record. What spec.timeout bounds
// is said, and derived, in one place: deadline.go.
//
// # The parts, and where each optimisation lives
//
//   - reconciler.go: Reconcile, the phases in order, the apply (with the
//     inventory recorded ahead of the writes); outcome.go the record;
//     status.go and events.go the ending; deadline.go spec.timeout.
//   - source.go, dependencies.go: the source lookup and the dependsOn gate
//     (internal/apply/dependency); clients.go the clients that apply
//     (impersonation, remote clusters); finalize.go deletion.
//   - health.go, healthwait.go: health checks. The wait is parked between
//     looks and gives its worker back; the parked waits themselves, and
//     which copy of an object a look reads, are internal/apply/parked,
//     woken by internal/apply/healthwatch's shared watch cache
//     (docs/design/0014-parked-health-checks.md).
//   - quiet.go: a run that starts converged holds its progress back and,
//     when it finds nothing to change, writes nothing
//     (docs/design/0019-quiet-reconciles.md). hold.go: every run holds
//     each progress phase back for a second; a timer writes one that
//     lasts longer (docs/design/0043-coalesced-progress-writes.md).
//   - early.go: a large build's runs are dry-run while the next ones build
//     (docs/design/0020-large-and-idle-fleets.md, decision 6).
//   - The apply memo, that skips the dry-run of objects nobody wrote since,
//     and its Secrets across restarts: internal/kustomize/applymemo (0020,
//     decisions 1 and 5; 0022). The build cache: internal/kustomize/buildcache.
//     The artifact trees shared among builds: internal/kustomize/sharedtree.
//   - intern.go: one copy of the strings a fleet repeats, in the cache.
//   - setup.go, configwatch.go, followers.go: the watches (sources,
//     dependencies, labelled and produced ConfigMaps and Secrets,
//     docs/design/0006-substitution-followers.md).
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
