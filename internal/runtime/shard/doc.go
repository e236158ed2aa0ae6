// Package shard is automatic sharding (--shard-mode=auto): every replica
// of one Deployment is active, holds a membership Lease of its own, and
// reconciles the objects that rendezvous hashing of namespace/name assigns
// to it among the live members. It owns the three pieces that make that
// safe: the membership (leases held and watched), the hand-over barrier
// (a replica reconciles under a view of the members only once every live
// member has drained what the view takes from it), and the fence (no write
// leaves a replica whose own Lease is not held with margin). See
// docs/design/0037-automatic-sharding.md.
package shard
