// Package idle measures a large fleet at rest (issue 16, goal 3): many
// Kustomizations of one ConfigMap each on one GitRepository, interval 10m.
// It reports the API requests per second the controllers send in the
// first minute after the fleet is created, the time to converge, the
// resident set and heap per Kustomization above the empty controllers
// (after a GC that returns freed memory to the system), and, over an idle
// window of one whole interval (stretched by the jitter, two minutes at
// least) that starts 30 s after convergence, so that every
// Kustomization's periodic reconcile falls in it: the CPU in % of a core,
// the requests per second, the reconciles per second (controller-runtime's
// count) and the CPU-ms and requests per reconcile. Run one size per
// process, so that the empty controllers are the baseline:
//
//	WEIR_BENCH_KUSTOMIZATIONS=2000 go test ./bench/idle -run '^$' -bench . -benchtime 1x -v -timeout 90m
//
// WEIR_BENCH_INTERVAL sets the Kustomizations' interval (a Go duration):
// 1,000 at 1m run the periodic reconciles of 10,000 at 10m, at the same
// rate, in a two-minute window. WEIR_BENCH_PROFILE names a directory for a
// heap profile at rest and a CPU profile of the idle window
// (`go tool pprof -tagfocus weir=controllers`); it also samples every
// 4 KiB allocated, which costs CPU: compare profiled runs with profiled
// runs only. -v shows the logs (memory classes, requests by method and
// resource since the start and in the window).
package idle
