// Package ui holds the UI benchmark of issue 18: a fleet of 1,000
// Kustomizations (chains of ten by dependsOn, on one GitRepository) whose
// inventories list 20,000 objects, served by internal/ui/server in local
// mode and driven in headless Chromium with chromedp. The Kustomizations'
// and the GitRepository's statuses are written directly (Ready, an
// inventory of 20 entries each) rather than by the controllers, and the
// 20,000 inventory entries name objects that are not created: the
// overview and graph read the toolkit objects only. It measures, each beside
// a floor of the same run:
//
//   - the first overview load (login URL to the table shown), beside the
//     same lists done by a plain client and a blank page load;
//   - the graph render (/graph to every node drawn), beside the same floor;
//   - a status change to the page showing it (the object page, and its row
//     on the overview), beside a plain watch seeing the same change.
//
// BenchmarkObjectPage measures the object page of one Kustomization of
// 500 inventory objects (WEIR_BENCH_UI_OBJECTS), a fifth of them
// Deployments with a ReplicaSet and two Pods each written directly: the
// first render of the whole tree down to the Pods beside the same
// Kubernetes API calls made directly plus a blank page load, and the live
// update of its state beside a plain watch. The overview at 5,000 objects
// is BenchmarkUI with WEIR_BENCH_UI_KUSTOMIZATIONS=5000. Figures:
// docs/bench/0036-ui.md.
//
// It prints figures and ratios with b.ReportMetric and asserts no time
// limit. Run it with
//
//	go test ./bench/ui -run '^$' -bench . -benchtime 1x -timeout 30m
//
// WEIR_BENCH_UI_KUSTOMIZATIONS overrides N = 1000. It needs Chromium (it
// skips without one). A plain `go test ./...` starts nothing here.
package ui
