// Package runtime is the kit every weir reconciler is built from. It has no
// code of its own; its subpackages each own one concern:
//
//   - conditions: read and write Ready/Reconciling/Stalled the way kstatus
//     and the flux CLI read them;
//   - patch: snapshot an object at the start of a reconcile and patch only
//     what changed (metadata and status separately) at the end;
//   - errs: typed errors that say how to react (retry, wait, stall);
//   - events: Kubernetes Events plus Flux's HTTP event forwarding;
//   - metrics: gotk_reconcile_duration_seconds and friends;
//   - shard: automatic sharding (--shard-mode=auto): membership Leases,
//     the assignment of objects to replicas, hand-over and the write fence.
package runtime
