// Package helmserver owns the Helm chart repository that weir's tests install
// from: packaged charts and an index.yaml served over HTTP on 127.0.0.1,
// stopped when the test ends.
//
// Charts are built in Go with Helm's own SDK, packaged with chartutil.Save and
// indexed with repo.IndexDirectory, so the archives and the index are the
// ones `helm package` and `helm repo index` would write, with absolute chart
// URLs. Nothing is checked in; every file time is fixed, so a chart's digest
// is the same on every run.
//
// Usage:
//
//	srv := helmrepo.New(t, helmrepo.Options{Username: "user", Password: "pass"})
//	srv.AddChart(t, helmrepo.NewChart("podinfo", "1.0.0", "6.0.0"))
//	srv.AddChart(t, helmrepo.NewChart("podinfo", "1.1.0", "6.1.0")) // re-indexes
//	// Point a HelmRepository at srv.URL(); its index is srv.URL()+"/index.yaml".
package helmserver
