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
//
// Figures of one run (2026-12-04, 2 shared cores, load average 15.5
// while five builds shared the machine: wall times are inflated, the
// counts and the ratios to the same run's floor are what count): 200 apps
// all generated in 13.30 s, 4.04 times the floor of 3.29 s (the
// GitRepository fetching and storing the same artifact once); a commit
// changing one app gave that app its new artifact in 5.86 s, 1.78 times
// the floor, and rewrote 1 ExternalArtifact of 200; 2.57 CPU-seconds
// while generating; peak RSS 163.3 MiB; API writes while generating: 200
// ExternalArtifact patches, 200 status patches, 3 generator writes.
package generator
