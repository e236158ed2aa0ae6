// Package generator holds the ArtifactGenerator benchmark of issue 26: a
// monorepo of N apps under one pathPattern (@repo/apps/{app}), so one
// generator makes N ExternalArtifacts, with the source and source-watcher
// controllers in the benchmark process. It reports the time from the
// generator's creation to every artifact generated, then from a commit that
// changes one app to that app's new artifact, how many ExternalArtifacts
// that commit rewrote (one is right), and CPU and RSS. The floor is the same
// repository's GitRepository fetching and storing its artifact once, in the
// same run. No time limit is asserted. Run it with
//
//	go test ./bench/generator -run '^$' -bench . -benchtime 1x -timeout 30m
//
// WEIR_BENCH_APPS (comma-separated) overrides N = 200. A plain `go test
// ./...` starts nothing here.
package generator
