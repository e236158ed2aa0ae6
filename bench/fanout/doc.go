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
// A plain `go test ./...` starts nothing here.
package fanout
