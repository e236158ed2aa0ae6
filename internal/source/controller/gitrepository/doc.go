// Package gitrepository reconciles GitRepository objects the way Flux's
// source-controller does: resolve the reference with one ls-remote, skip
// the clone when the revision is already stored, otherwise clone, verify
// signatures if asked, pack the tree (minus ignored files) into a
// digest-addressed tarball, serve it, and report it in status.artifact with
// Flux's conditions, reasons, messages and events. A failure never removes
// the artifact already served.
package gitrepository
