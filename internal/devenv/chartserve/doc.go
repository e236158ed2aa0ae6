// Package chartserve serves a Helm chart repository on 127.0.0.1: chart
// directories packaged into archives, and the index.yaml that lists them,
// written by Helm's own packaging (chartutil.Save) and indexing
// (repo.IndexDirectory) so that clients meet a repository exactly as
// `helm package` and `helm repo index` make one. It is what `weir dev`
// serves the example charts with, as package gitserve serves the example
// fleet; tests use internal/devenv/testenv/helmserver, which builds charts in memory.
package chartserve
