// Package helmchart reconciles HelmChart objects the way Flux's
// source-controller does: from a HelmRepository it resolves spec.version
// in the repository's stored index (or an OCI registry's tags) and pulls
// the chart; from a GitRepository or Bucket it packages the chart at
// spec.chart in the source artifact, resolving its dependencies (file://
// paths in the source, repository URLs through the namespace's
// HelmRepositories and their credentials). Values files are merged into
// values.yaml, the version gets Flux's build metadata, and the chart is
// stored as helmchart/<ns>/<name>/<chart>-<version>.tgz with revision the
// chart version, reported with Flux's conditions, reasons, messages and
// events. A HelmChart follows its source at once: the source kinds are
// watched and mapped to HelmCharts through an index.
//
// The chart work itself (loading within bounds, refusing paths that leave
// the source, merging, packaging) is internal/source/chart; reaching
// repositories is internal/source/helmrepo; registries and cosign are
// internal/source/oci, the same code the OCIRepository controller runs.
//
// Differences from Flux, each deliberate: waiting for a source that has no
// artifact yet keeps Reconciling True (kstatus: in progress) rather than
// counting as a failure; keyless cosign and notation verification stall
// with "not supported yet"; status.url is the artifact's own URL (no
// "latest" symlink); an OCI chart's manifest digest is kept in
// status.artifact.metadata.
package helmchart
