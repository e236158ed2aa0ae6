// Package getcmd implements `weir get`: the status tables of `flux get`
// (sources, kustomizations, helmreleases, receivers, all), with kubectl's -o
// yaml|json|wide|name beyond them. Each kind's table has the flux CLI's
// columns: receivers have no REVISION.
package getcmd
