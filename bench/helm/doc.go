// Package helm holds weir's HelmRelease benchmarks: the shape of
// fluxcd/flux-benchmark (N releases of a small chart from one
// HelmRepository) against a real control plane with a kwok node, the
// source and helm controllers running in the benchmark process, and the
// floor (the same rendered manifests applied directly and waited for)
// measured in the same run. They report figures with b.ReportMetric and
// assert no time limit. Run them with
//
//	go test ./bench/helm -run '^$' -bench . -benchtime 1x -timeout 60m
//
// A plain `go test ./...` starts nothing here.
package helm
