// Package restart holds the start-up benchmark of issue 16 (goal 4): N
// Kustomizations of four objects each (bench/internal/benchenv's
// FleetApp, `wait: true`) converge under the kustomize controller, which is
// then stopped and started again, as a new process would, over the
// converged fleet. It reports the time of the restarted controller's first
// pass (until every Kustomization was reconciled once), the writes it sent
// by verb and resource, its requests per second during the first minute,
// and how far the etcd revision moved. The source controller runs
// throughout and is not restarted. Run it with
//
//	go test ./bench/restart -run '^$' -bench . -benchtime 1x -timeout 60m
//
// WEIR_BENCH_KUSTOMIZATIONS (comma-separated) overrides N = 1000.
// A plain `go test ./...` starts nothing here.
package restart
