package meta

import (
	"fmt"
	"testing"
	"time"
)

func TestHistoryUpsert(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var h History
	h.Upsert("sha256:a", t0, time.Second, "ReconciliationSucceeded", map[string]string{"revision": "r1"})
	h.Upsert("sha256:a", t0.Add(time.Minute), 2*time.Second, "ReconciliationSucceeded", map[string]string{"revision": "r1"})
	if len(h) != 1 || h[0].TotalReconciliations != 2 || !h[0].LastReconciled.Time.Equal(t0.Add(time.Minute)) ||
		!h[0].FirstReconciled.Time.Equal(t0) || h[0].LastReconciledDuration.Duration != 2*time.Second {
		t.Fatalf("same digest and status: %+v", h)
	}
	h.Upsert("sha256:a", t0, time.Second, "HealthCheckFailed", nil)
	if len(h) != 2 || h[0].LastReconciledStatus != "HealthCheckFailed" {
		t.Fatalf("same digest, other status must be a new snapshot: %+v", h)
	}
	h.Upsert("sha256:a", t0, time.Second, "ReconciliationSucceeded", nil)
	if len(h) != 2 || h[0].LastReconciledStatus != "ReconciliationSucceeded" || h[0].TotalReconciliations != 3 {
		t.Fatalf("a repeated outcome moves to the front: %+v", h)
	}
	for i := range 10 {
		h.Upsert(fmt.Sprintf("sha256:%d", i), t0, time.Second, "ReconciliationSucceeded", nil)
	}
	if len(h) != MaxHistorySize || h[0].Digest != "sha256:9" {
		t.Fatalf("history keeps the %d newest: %d entries, first %s", MaxHistorySize, len(h), h[0].Digest)
	}
}
