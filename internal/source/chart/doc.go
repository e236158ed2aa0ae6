// Package chart builds the chart a HelmChart serves, on Helm's own SDK
// (helm.sh/helm/v4: loader, chartutil, repo): it resolves a version from a
// repository index as Flux does, loads chart archives and directories
// within size bounds and without letting any path, link or dependency
// leave the source root, resolves a chart's dependencies (file:// paths in
// the source root, HTTP and OCI repositories through a caller-supplied
// lookup), merges values files into values.yaml, stamps Flux's build
// metadata on the version and packages the result with chartutil.Save.
//
// It also loads the chart a HelmRelease installs (release.go): SourceOf
// names the object whose artifact holds it, LoadArtifact fetches and
// loads it; the helm controller, `weir build|diff hr` and the UI call the
// same functions.
//
// It reads no Kubernetes objects: the HelmChart controller turns its Build
// and BuildError into status, and supplies the repositories.
//
// What it adds to Helm's loader, and why: the archive-size bound
// (--helm-chart-max-size) and a per-file bound (--helm-chart-file-max-size;
// Helm 4 no longer checks one), and a directory walk that refuses links
// resolving outside the source root (Helm's directory loader follows any
// link). Helm's archive loader already refuses absolute and "../" names,
// and never writes to disk, so a link entry in an archive reaches nobody.
package chart
