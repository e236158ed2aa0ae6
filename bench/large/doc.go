// Package large measures one Kustomization of many objects (issue 16, goal
// 2): its cold apply, a no-op re-reconcile and a commit that changes one
// object, each with the controller process's CPU seconds, wall time,
// allocations and API requests by method and resource, beside a floor
// measured in the same run: the same objects server-side applied directly
// by a plain client, first into an empty namespace and then once more
// unchanged. Run it with
//
//	go test ./bench/large -run '^$' -bench . -benchtime 1x
//
// WEIR_BENCH_OBJECTS sets the object count (default 1500) and
// WEIR_BENCH_PROFILE a directory for a CPU and allocation profile of each
// phase. BenchmarkLargeKustomizationBesideFlux runs the ConfigMaps
// shape's phases under Flux's own controllers first
// (WEIR_BENCH_FLUX_BIN_DIR, docs/design/0038), then weir's, and reports
// weir ÷ Flux; it skips without that variable.
package large
