// Package getcmd implements `weir get`: the status tables of `flux get`
// (sources, kustomizations, helmreleases, all), with kubectl's -o
// yaml|json|wide|name beyond them.
package getcmd
