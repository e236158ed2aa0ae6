// Package fanout holds the health-check fan-out benchmark of issue 16: N
// Kustomizations of four objects each (ConfigMap, Secret, ServiceAccount
// and a one-replica Deployment), `wait: true`, on one GitRepository, with
// the source and kustomize controllers at --concurrent=10 in the benchmark
// process and a kwok node that makes Deployments Available. The floor is
// the same objects applied directly, 10 at a time, and waited for, in the
// same run. It reports figures with b.ReportMetric and asserts no time
// limit. Run it with
//
//	go test ./bench/fanout -run '^$' -bench . -benchtime 1x -timeout 60m
//
// WEIR_BENCH_KUSTOMIZATIONS (comma-separated) overrides N = 200,1000.
// BenchmarkHealthFanOutBesideFlux runs the fleet under Flux's own
// controllers first (WEIR_BENCH_FLUX_BIN_DIR, docs/design/0038), then
// weir's, and reports weir ÷ Flux; it skips without that variable:
//
//	WEIR_BENCH_FLUX_BIN_DIR=/work/flux-bin WEIR_BENCH_KUSTOMIZATIONS=200 \
//	  go test ./bench/fanout -run '^$' -bench BesideFlux -benchtime 1x -timeout 60m
//
// A plain `go test ./...` starts nothing here.
package fanout
