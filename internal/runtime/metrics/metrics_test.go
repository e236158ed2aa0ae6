package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/testing/protocmp"
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
	got, err := testutil.CollectAndFormat(r.duration, expfmt.TypeTextPlain, durationName)
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

// TestDurationsMatchClientGolangHistogram feeds the same observations to
// the compact collector and to the HistogramVec it replaces (Flux's: same
// name, help, labels and buckets) and compares what a scrape gathers,
// bucket by bucket; only the created timestamps differ (each set when its
// series was made).
func TestDurationsMatchClientGolangHistogram(t *testing.T) {
	observations := []struct {
		kind, namespace, name string
		v                     float64
	}{
		{"Kustomization", "apps", "a", 0.001},    // below the first bound
		{"Kustomization", "apps", "a", 0.01},     // on the first bound
		{"Kustomization", "apps", "a", 0.015},    // between bounds
		{"Kustomization", "apps", "a", 5.12},     // on the last bound
		{"Kustomization", "apps", "a", 7},        // above every bound: +Inf only
		{"Kustomization", "apps", "b", 0.16},     // another name
		{"Kustomization", "flux-system", "a", 2}, // another namespace
		{"GitRepository", "apps", "a", 0.3},      // another kind
		{"Kustomization", "apps", "b", 0.16},
	}
	want := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: durationName, Help: durationHelp, Buckets: prometheus.ExponentialBuckets(10e-3, 2, 10),
	}, []string{"kind", "name", "namespace"})
	got := newDurations()
	for _, o := range observations {
		want.WithLabelValues(o.kind, o.name, o.namespace).Observe(o.v)
		got.observe(seriesKey{kind: o.kind, namespace: o.namespace, name: o.name}, o.v)
	}
	wantFamilies, gotFamilies := gather(t, want), gather(t, got)
	for _, m := range gotFamilies[0].GetMetric() {
		if m.GetHistogram().GetCreatedTimestamp() == nil {
			t.Errorf("series %v has no created timestamp", m.GetLabel())
		}
	}
	if diff := cmp.Diff(wantFamilies, gotFamilies, protocmp.Transform(),
		protocmp.IgnoreFields(&dto.Histogram{}, "created_timestamp")); diff != "" {
		t.Errorf("gathered metrics differ from a HistogramVec's (-want +got):\n%s", diff)
	}
	wantText, err := testutil.CollectAndFormat(want, expfmt.TypeTextPlain, durationName)
	if err != nil {
		t.Fatal(err)
	}
	gotText, err := testutil.CollectAndFormat(got, expfmt.TypeTextPlain, durationName)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(wantText), string(gotText)); diff != "" {
		t.Errorf("text exposition differs (-want +got):\n%s", diff)
	}
}

func gather(t *testing.T, c prometheus.Collector) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 {
		t.Fatalf("%d metric families, want 1", len(families))
	}
	return families
}
