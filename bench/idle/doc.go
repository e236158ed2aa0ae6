// Package idle measures a large fleet at rest (issue 16, goal 3): many
// Kustomizations of one ConfigMap each on one GitRepository, interval 10m.
// It reports the API requests per second the controllers send in the
// first minute after the fleet is created, the time to converge, the
// resident set and heap per Kustomization above the empty controllers
// (after a GC that returns freed memory to the system), and the CPU and
// requests per second over two idle minutes. Run one size per process,
// so that the empty controllers are the baseline:
//
//	WEIR_BENCH_KUSTOMIZATIONS=2000 go test ./bench/idle -run '^$' -bench . -benchtime 1x -timeout 90m
//
// WEIR_BENCH_PROFILE names a directory for a heap profile at rest.
package idle
