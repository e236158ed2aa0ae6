// Package bench holds weir's end-to-end benchmarks. They run the real
// assembly (internal/app.Run) against a real control plane and real servers
// on 127.0.0.1, and report figures with b.ReportMetric; nothing here asserts
// a time limit. Run them with `make bench` or
//
//	go test ./bench -run '^$' -bench . -benchtime 5x
//
// Results go into the notes of the issue that asked for them.
//
// The *BesideFlux benchmarks (bench/fanout, bench/large) measure Flux's own
// source-controller and kustomize-controller in the same run, on the same
// control plane, first, then weir's, and report weir ÷ Flux. They need
// WEIR_BENCH_FLUX_BIN_DIR, a directory with those two binaries built from
// Flux's module sources outside this repository (docs/design/0038 says
// how), and skip without it.
package bench
