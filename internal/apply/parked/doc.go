// Package parked holds health checks that gave their worker back: a set of
// objects an apply wrote, judged with ssa.Health (kstatus, or the CEL
// expressions of health.Checks) once per look until they are all Current,
// one fails (fail-fast) or a deadline passes. Between looks the wait is
// parked in memory, keyed by its owner; a watch event on one of its
// objects (internal/apply/healthwatch) or, for kinds the watches do not
// follow, the poll interval brings the owner back to look again
// (docs/design/0014-parked-health-checks.md).
//
// Its API names no kind: an owner is a namespaced name, what a wait was
// parked for is a generation, a revision and a request token, and what
// the owner carries to the end of the wait is a type parameter. The
// Kustomization reconciler is its first user; the HelmRelease's waits are
// meant to move onto it the same way.
//
// What a look reads is the part that needs care (written.go): the watch
// cache may be an instant behind the apply that just wrote an object, so
// the objects a wait's own apply wrote are judged by the apply's answers
// or read from the API server until the cache has caught up.
package parked
