// Package bucket reconciles Bucket objects the way Flux's source-controller
// does for the generic (S3-compatible) provider: list the bucket under
// spec.prefix, index the objects that the ignore rules keep, and take the
// digest of that index as the revision. When the stored artifact already
// has that revision nothing is downloaded; otherwise every indexed object is
// fetched into a scratch directory (keys checked, size bounded, see
// internal/source/bucket), packed into bucket/<ns>/<name>/<hex>.tar.gz, served,
// and reported in status.artifact with Flux's conditions, reasons,
// messages and events. A failure never removes the artifact already served.
//
// The aws, gcp and azure providers and spec.sts are accepted by the API
// but not implemented: such a Bucket is Stalled with a message that says
// so, instead of pretending with a generic S3 client.
//
// # Differences from Flux worth knowing
//
//   - status.url is the artifact's own URL; Flux points it at a
//     latest.tar.gz link that weir's storage does not keep.
//   - Flux's documented default exclusions apply to the index (see
//     internal/source/bucket): Flux documents them for Buckets but its controller
//     does not apply them.
//   - An unchanged index with a changed spec.ignore (one that keeps the same
//     objects) records the new status.observedIgnore without rebuilding:
//     the artifact would be byte-identical. Flux leaves observedIgnore at
//     its old value until the next rebuild.
//   - The root .sourceignore is downloaded only when its ETag changed since
//     the last time this controller read it for the object, so an unchanged
//     bucket costs a listing (and a HEAD when a prefix hides the
//     .sourceignore) and no object download at all.
package bucket
