// Package bench holds weir's end-to-end benchmarks. They run the real
// assembly (internal/app.Run) against a real control plane and real servers
// on 127.0.0.1, and report figures with b.ReportMetric; nothing here asserts
// a time limit. Run them with `make bench` or
//
//	go test ./bench -run '^$' -bench . -benchtime 5x
//
// Results go into the notes of the issue that asked for them.
package bench
