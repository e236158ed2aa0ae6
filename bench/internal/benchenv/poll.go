package benchenv

import (
	"context"
	"testing"
	"time"
)

// PollInterval is how often a benchmark looks at what it waits for. Once
// a second, not testenv.Eventually's 50 ms: the benchmark's own reads (a
// List of 1,000 Kustomizations or Deployments) run in the measured process,
// and at 20 a second they cost it as much CPU and memory as the
// controllers it measures.
const PollInterval = time.Second

// Poll calls check every PollInterval until it reports done, and fails b
// with check's last state after timeout.
func Poll(b testing.TB, timeout time.Duration, check func(ctx context.Context) (bool, string)) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		ok, state := check(ctx)
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			b.Fatalf("condition not met after %s: %s", timeout, state)
		case <-time.After(PollInterval):
		}
	}
}
