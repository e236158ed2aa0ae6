// Package imagerepository reconciles Flux's ImageRepository
// (image.toolkit.fluxcd.io/v1) with image-reflector-controller's
// behaviour:
//
//  1. An image Flux would refuse (a URL scheme, a tag) stalls with
//     ImageURLInvalid.
//  2. Credentials from spec.secretRef, the ServiceAccount's image pull
//     secrets, spec.certSecretRef and spec.proxySecretRef; for a cloud
//     provider a registry login (internal/auth/registry) as the
//     ServiceAccount's or the controller's identity instead, and a provider
//     with no login yet stalls (AuthenticationFailed "failed to configure
//     authentication options").
//  3. Scan only when due, as Flux: never scanned, a new
//     reconcile.fluxcd.io/requestedAt, a new image name or exclusion list,
//     no stored tags (storage emptied by a restart), or the interval passed
//     since status.lastScanResult.scanTime. Otherwise the object comes back
//     when the next scan is due.
//  4. The scan lists every tag page by page, drops the exclusion list's
//     matches, keeps at most --max-tags-per-image-repository (condition
//     TagLimitExceeded when there were more) and stores the list in
//     internal/image/scan's Store (ReadOperationFailed "scan failed: …").
//
// Ready on success reads "successful scan: found N tags with checksum
// sha256:…", Flux 2.9's words; status carries canonicalImageName,
// lastScanResult{revision, tagCount, scanTime, latestTags (the ten first in
// descending order)} and observedExclusionList. Events follow Flux: Normal
// when the object becomes ready or its Ready message changes (new tags),
// Warning on failure. Deleting an ImageRepository deletes its tags.
package imagerepository
