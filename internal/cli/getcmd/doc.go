// Package getcmd implements `weir get`: the status tables of `flux get`
// (sources, kustomizations, helmreleases, receivers, alert-providers,
// alerts, all), with kubectl's -o yaml|json|wide|name beyond them. Each
// kind's table has the flux CLI's columns: receivers, alert providers and
// alerts have no REVISION, and the static alert providers and alerts always
// read as ready.
package getcmd
