// Package containerimage builds weir-controller's container image without Docker:
// one layer holding the static binary, a passwd entry for the non-root user
// it runs as, and a CA bundle, assembled with go-containerregistry into an
// OCI image whose digest depends only on its inputs (fixed file times and
// owners), then written to a registry or an OCI tarball.
//
// The image suits the Deployments of internal/install/manifests: it runs as
// 65534:65534 (runAsNonRoot holds without a runAsUser), writes nothing
// outside the /tmp and /data volumes (readOnlyRootFilesystem), and needs no
// capability.
package containerimage
