// Package imagepolicy reconciles Flux's ImagePolicy
// (image.toolkit.fluxcd.io/v1) with image-reflector-controller's
// behaviour:
//
//  1. digestReflectionPolicy Always without spec.interval stalls
//     (IntervalNotConfigured).
//  2. The ImageRepository of spec.imageRepositoryRef, in another namespace
//     only when --no-cross-namespace-refs is off and the repository's
//     accessFrom.namespaceSelectors match the policy's namespace
//     (AccessDenied; a missing repository is DependencyNotReady; both
//     retried, since namespace labels are not watched).
//  3. Its tags at status.lastScanResult.revision from internal/image/scan's
//     Store (DependencyNotReady "no tags in database" until the first scan:
//     the repository's watch brings the policy back).
//  4. The election (internal/image/tagpolicy; InvalidPolicy stalls, a failed
//     election is Failure) and, by digestReflectionPolicy, the digest of the
//     elected tag: Never, IfNotPresent (once per elected tag), Always
//     (every spec.interval).
//
// status.latestRef{name, tag, digest} is what ImageUpdateAutomations write
// into Git; observedPreviousRef keeps the ref it replaced. The Ready message
// is Flux's "Latest image tag for <image> resolved to <tag>[ with digest
// <digest>][ (previously <image>:<tag>[@<digest>])]", and a Normal event
// carries it whenever it changes, so a new latest image is announced once.
//
// A policy is reconciled again at once when its repository's scan revision
// changes (a field index on imageRepositoryRef).
package imagepolicy
