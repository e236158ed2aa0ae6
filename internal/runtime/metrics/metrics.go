// Package metrics defines the Prometheus metrics Flux's controllers expose,
// under the same names so existing dashboards and alerts keep working.
package metrics

import (
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Flux's reconcile-duration histogram: its name, help, labels and buckets
// (fluxcd/pkg/runtime/metrics).
const (
	durationName = "gotk_reconcile_duration_seconds"
	durationHelp = "The duration in seconds of a GitOps Toolkit resource reconciliation."
)

// durationBuckets are the histogram's upper bounds: 10 ms doubling ten
// times, to 5.12 s.
var durationBuckets = prometheus.ExponentialBuckets(10e-3, 2, numBuckets)

const numBuckets = 10

// Recorder records reconcile outcomes.
type Recorder struct {
	duration *durations
}

// NewRecorder creates the metrics and registers them with reg (the
// controller-runtime registry when nil).
func NewRecorder(reg prometheus.Registerer) *Recorder {
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	r := &Recorder{duration: newDurations()}
	if err := reg.Register(r.duration); err != nil {
		// A second recorder in one process (tests, weir dev) shares the
		// histogram the first one registered.
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			panic(err)
		}
		r.duration = already.ExistingCollector.(*durations)
	}
	return r
}

// RecordDuration observes how long a reconcile of kind/ns/name took.
func (r *Recorder) RecordDuration(kind, namespace, name string, start time.Time) {
	r.duration.observe(seriesKey{kind: kind, namespace: namespace, name: name}, time.Since(start).Seconds())
}

// durations is gotk_reconcile_duration_seconds, a histogram with one
// series per reconciled object, kept as a collector of its own rather than
// a client_golang HistogramVec. The output is the same (name, help, labels,
// buckets, sum, count, created timestamp), but a HistogramVec series is
// ~1.3 KiB in 15–17 small allocations (two sets of counts for its hot/cold
// swap, native-histogram state, label pairs), which a fleet of 10,000 idle
// Kustomizations pays 10,000 times and which, made among a reconcile's
// garbage, pins as many otherwise empty heap spans. Here a series is one
// map slot of ~150 bytes. Observations are rare (one per reconcile), so one
// mutex is enough.
type durations struct {
	desc   *prometheus.Desc
	mu     sync.Mutex
	series map[seriesKey]series
}

type seriesKey struct{ kind, namespace, name string }

// series are one object's observations: counts[i] is how many fell in
// (durationBuckets[i-1], durationBuckets[i]]; those above the last bound
// count only in count (the +Inf bucket).
type series struct {
	counts  [numBuckets]uint64
	count   uint64
	sum     float64
	created int64 // Unix nanoseconds of the first observation
}

func newDurations() *durations {
	return &durations{
		desc:   prometheus.NewDesc(durationName, durationHelp, []string{"kind", "name", "namespace"}, nil),
		series: map[seriesKey]series{},
	}
}

func (d *durations) observe(key seriesKey, v float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.series[key]
	if !ok {
		s.created = time.Now().UnixNano()
	}
	// The bucket client_golang's histogram picks: the first upper bound
	// not below v.
	if i := sort.SearchFloat64s(durationBuckets, v); i < numBuckets {
		s.counts[i]++
	}
	s.count++
	s.sum += v
	d.series[key] = s
}

// Describe implements prometheus.Collector.
func (d *durations) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

// Collect implements prometheus.Collector: a constant histogram per
// series, with cumulative bucket counts as the exposition formats want.
func (d *durations) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	keys := make([]seriesKey, 0, len(d.series))
	values := make([]series, 0, len(d.series))
	for k, s := range d.series {
		keys = append(keys, k)
		values = append(values, s)
	}
	d.mu.Unlock()
	for i, s := range values {
		buckets := make(map[float64]uint64, numBuckets)
		var cumulative uint64
		for j, bound := range durationBuckets {
			cumulative += s.counts[j]
			buckets[bound] = cumulative
		}
		k := keys[i]
		ch <- prometheus.MustNewConstHistogramWithCreatedTimestamp(d.desc, s.count, s.sum, buckets,
			time.Unix(0, s.created), k.kind, k.name, k.namespace)
	}
}
