// Package lint benchmarks `weir lint` on a generated repository of 200
// Kustomizations and 5,000 objects (internal/devenv/testenv/fleetgen): wall time
// and peak RSS of a process that loads the fleet and runs every rule,
// next to the floor, a process running plain kustomize builds (krusty,
// nothing else) of the same directories, measured in the same run. Each
// runs in a child process of the test binary so its peak RSS is its own.
// Figures are reported with b.ReportMetric; nothing asserts a limit:
//
//	go test ./bench/lint -run '^$' -bench . -benchtime 3x
package lint
