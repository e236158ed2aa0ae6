// Package prdiff benchmarks `weir diff --base` on a generated fleet of 200
// Kustomizations and 5,000 objects (internal/devenv/testenv/fleetgen) with a
// three-commit history: one application changed, then every application
// changed. Each step runs in a child process (this test binary again), so
// that its wall time and peak RSS are its own; the floor, one plain load
// of the repository (internal/fleet.Load, every Kustomization built once),
// is measured in the same run. It reports figures with b.ReportMetric and
// asserts no time limit. Run it with
//
//	go test ./bench/prdiff -run '^$' -bench . -benchtime 1x
//
// A plain `go test ./...` starts nothing here.
package prdiff
