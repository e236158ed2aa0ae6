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
//
// Parked Helm waits (docs/design/0030-helm-parked-waits.md), one run each
// on a shared 2-core machine, BenchmarkHelmReleases, before (main
// cb8c51a) → after:
//
//	100 releases: 27.2 → 25.5 s (floor 23.1 / 23.4 s), peak RSS 235 → 209 MiB, 8.0 → 6.1 CPU-s
//	500 releases: 186.8 → 121.3 s (floor 119.9 / 119.6 s), peak RSS 428 → 242 MiB, 81.2 → 33.8 CPU-s
//
// BenchmarkHelmReleasesBesideFlux measures the same releases under Flux's
// own source-controller and helm-controller first, on the same control
// plane (docs/design/0038-flux-side-by-side.md; figures in
// docs/bench/0038-flux-side-by-side.md):
//
//	WEIR_BENCH_FLUX_BIN_DIR=/work/flux-bin WEIR_BENCH_RELEASES=100 \
//	  go test ./bench/helm -run '^$' -bench BesideFlux -benchtime 1x -timeout 45m
package helm
