// Package ocirepository reconciles OCIRepository objects the way Flux's
// source-controller does: resolve the reference to a manifest digest with
// one HEAD, verify the digest's cosign signature if asked, skip the pull
// when the digest and the spec the stored artifact was built with are
// unchanged, otherwise pull the manifest and one layer, extract it (minus
// ignored files) into a digest-named tarball or copy it as is, serve it,
// and report it in status.artifact with Flux's conditions, reasons,
// messages and events. A failure never removes the artifact already
// served.
//
// Differences from Flux, each deliberate: a registry's 401/403 is reported
// with reason AuthenticationFailed (Flux folds it into
// OCIArtifactPullFailed); status.url is the artifact's own URL, as weir's
// storage keeps no "latest.tar.gz" symlink; keyless cosign, notation and
// the azure/gcp providers are refused with a Stalled condition saying they
// are not supported yet, rather than half-done. Provider aws logs in to ECR
// through internal/auth/registry when no Secret gives credentials.
package ocirepository
