package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

func TestDurationHistogramHasFluxNameAndLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := NewRecorder(reg)
	r.RecordDuration("GitRepository", "flux-system", "podinfo", time.Now().Add(-time.Second))
	const want = `
# HELP gotk_reconcile_duration_seconds The duration in seconds of a GitOps Toolkit resource reconciliation.
# TYPE gotk_reconcile_duration_seconds histogram
gotk_reconcile_duration_seconds_count{kind="GitRepository",name="podinfo",namespace="flux-system"} 1
`
	// Compare only the _count line: bucket boundaries are an implementation
	// detail, the name and labels are the contract.
	got, err := testutil.CollectAndFormat(r.duration, expfmt.TypeTextPlain, "gotk_reconcile_duration_seconds")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(string(got), line) {
			t.Errorf("metrics lack %q:\n%s", line, got)
		}
	}
}

func TestSecondRecorderSharesTheHistogram(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, b := NewRecorder(reg), NewRecorder(reg)
	if a.duration != b.duration {
		t.Error("second recorder created a second histogram")
	}
}
