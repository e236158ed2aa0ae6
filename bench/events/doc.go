// Package events holds the event-server benchmark of issue 27: 1,000
// events a second for 10 seconds across 50 Alerts and 10 Provider types
// that post over HTTP (generic, generic-hmac, slack, discord, msteams,
// googlechat, rocket, webex, alertmanager, grafana), into local sinks on
// 127.0.0.1, through the real event server (the notification controller
// run alone in a child process, as Flux's Deployment runs it, so that its
// CPU time and peak RSS are its own) and the real API server (Providers,
// Alerts and a Secret as objects). A tenth of the events repeat one sent
// 50 ms before: Flux's rate limit (--rate-limit-interval, 5m) answers them
// 429.
//
// It reports the events posted, accepted and rate-limited, the deliveries
// by type, the p50 and p99 of the time from an event's POST to its sink
// receiving it, the p99 of the POST's own answer (the server never holds
// up the poster), the controller's CPU seconds and peak RSS, and the
// floor: the same number of requests posted by the benchmark straight to
// the sinks at the same rate, with the ratios to it. It asserts no time
// limit. Run it with
//
//	go test ./bench/events -run '^$' -bench . -benchtime 1x -timeout 30m
//
// WEIR_BENCH_EVENTS_SECONDS (10) and WEIR_BENCH_EVENTS_RATE (1000)
// override the duration and the rate. A plain `go test ./...` starts
// nothing here. Figures: docs/bench/0027-event-server.md.
package events
