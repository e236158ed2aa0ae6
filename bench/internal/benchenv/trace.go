package benchenv

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TraceEnv names the environment variable that, when set to a file, makes
// MeasurePhase append one line per controller request of each step to it
// (start offset from the step's start, duration, method, resource,
// dry-run, bytes sent, status code) and log the step's serial segments
// (see segments).
const TraceEnv = "WEIR_BENCH_TRACE"

// traced is one request the controllers sent.
type traced struct {
	start    time.Time
	duration time.Duration
	method   string
	resource string
	dryRun   bool
	sent     int64
	code     int
}

// trace holds the requests sent while WEIR_BENCH_TRACE is set.
var trace struct {
	on   bool
	mu   sync.Mutex
	reqs []traced
}

func init() { trace.on = os.Getenv(TraceEnv) != "" }

// record keeps one request when tracing.
func record(t traced) {
	if !trace.on {
		return
	}
	trace.mu.Lock()
	trace.reqs = append(trace.reqs, t)
	trace.mu.Unlock()
}

// traceSince returns the requests that started at or after t0, by start.
func traceSince(t0 time.Time) []traced {
	trace.mu.Lock()
	defer trace.mu.Unlock()
	var out []traced
	for _, r := range trace.reqs {
		if !r.start.Before(t0) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b traced) int { return a.start.Compare(b.start) })
	return out
}

// writeTrace appends the requests of the step name started at t0 to the
// trace file and logs its segments.
func writeTrace(b *testing.B, name string, t0 time.Time) {
	b.Helper()
	path := os.Getenv(TraceEnv)
	if path == "" {
		return
	}
	reqs := traceSince(t0)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s: start_ms dur_ms method resource dry_run bytes code\n", name)
	for _, r := range reqs {
		fmt.Fprintf(&sb, "%s %.1f %.1f %s %s %t %d %d\n", name, ms(r.start.Sub(t0)), ms(r.duration),
			r.method, r.resource, r.dryRun, r.sent, r.code)
	}
	if _, err := f.WriteString(sb.String()); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s timeline: %s", name, segments(reqs, t0))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// segments derives a step's serial segments from its requests: the first
// request, the first and last dry-run, each status write of a
// Kustomization (offset+duration, bytes), the first and last write of
// anything else, and the last request's end; offsets from t0 in seconds.
func segments(reqs []traced, t0 time.Time) string {
	if len(reqs) == 0 {
		return "no requests"
	}
	at := func(t time.Time) string { return fmt.Sprintf("%.2f", t.Sub(t0).Seconds()) }
	var dry, write []traced
	var status []string
	end := reqs[0].start
	for _, r := range reqs {
		end = later(end, r.start.Add(r.duration))
		switch {
		case r.dryRun:
			dry = append(dry, r)
		case r.method == "PATCH" && r.resource == "kustomizations/status":
			status = append(status, fmt.Sprintf("%s+%.2f(%dB)", at(r.start), r.duration.Seconds(), r.sent))
		case r.method == "PATCH" || r.method == "POST" || r.method == "PUT" || r.method == "DELETE":
			if !strings.HasPrefix(r.resource, "kustomizations") && !strings.HasPrefix(r.resource, "gitrepositories") &&
				r.resource != "events" && r.resource != "leases" {
				write = append(write, r)
			}
		}
	}
	parts := []string{"first request " + at(reqs[0].start)}
	parts = append(parts, span("dry-runs", dry, at)...)
	parts = append(parts, span("writes", write, at)...)
	parts = append(parts, "status patches ["+strings.Join(status, " ")+"]", "last request ends "+at(end))
	return strings.Join(parts, ", ")
}

// span names the first start and last end of reqs.
func span(what string, reqs []traced, at func(time.Time) string) []string {
	if len(reqs) == 0 {
		return []string{"no " + what}
	}
	last := reqs[0].start
	for _, r := range reqs {
		last = later(last, r.start.Add(r.duration))
	}
	return []string{fmt.Sprintf("%d %s %s→%s", len(reqs), what, at(reqs[0].start), at(last))}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
