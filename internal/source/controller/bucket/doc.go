// Package bucket reconciles Bucket objects the way Flux's source-controller
// does, for every provider (generic and aws through minio-go, gcp, azure;
// see internal/source/bucket's Store): list the bucket under
// spec.prefix, index the objects that the ignore rules keep, and take the
// digest of that index as the revision. When the stored artifact already
// has that revision nothing is downloaded; otherwise every indexed object is
// fetched into a scratch directory (keys checked, size bounded, see
// internal/source/bucket), packed into bucket/<ns>/<name>/<hex>.tar.gz, served,
// and reported in status.artifact with Flux's conditions, reasons,
// messages and events. A failure never removes the artifact already served.
//
// Credentials are resolved here (s3auth.go, cloud.go): spec.secretRef
// first, as Flux; else the cloud identity decided by auth.Settings (the
// ObjectLevelWorkloadIdentity gate, --default-service-account) and
// exchanged, with its cache, by internal/auth's cloud packages; spec.sts
// sends the aws exchange to another endpoint, or (generic) trades an LDAP
// user for temporary keys at MinIO's STS. See docs/design/0035.
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
