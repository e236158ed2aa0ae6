// Package helmapp is the chart "app" the HelmRelease render and diff tests
// share (internal/cli's build and diff, internal/ui/objectview's and
// internal/view/livediff's "what would change"), and Install, which installs a
// HelmRelease's release with the helm controller's own Helm client, as the
// controller would, without running it.
//
// The chart shows a value and whether the cluster serves HelmReleases in a
// ConfigMap, holds a Secret whose value must never be printed, and has a
// second ConfigMap the values can turn off (extra: false), so one values
// edit changes, masks and deletes.
//
//	dir := t.TempDir()
//	helmapp.WriteDir(t, dir, "1.0.0")
//	helmapp.Install(t, env, hr, helmapp.Chart(t, "1.0.0"))
package helmapp
