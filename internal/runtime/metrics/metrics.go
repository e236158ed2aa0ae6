// Package metrics defines the Prometheus metrics Flux's controllers expose,
// under the same names so existing dashboards and alerts keep working.
package metrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Recorder records reconcile outcomes.
type Recorder struct {
	duration *prometheus.HistogramVec
}

// NewRecorder creates the metrics and registers them with reg (the
// controller-runtime registry when nil).
func NewRecorder(reg prometheus.Registerer) *Recorder {
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	r := &Recorder{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gotk_reconcile_duration_seconds",
			Help:    "The duration in seconds of a GitOps Toolkit resource reconciliation.",
			Buckets: prometheus.ExponentialBuckets(10e-3, 2, 10),
		}, []string{"kind", "name", "namespace"}),
	}
	if err := reg.Register(r.duration); err != nil {
		// A second recorder in one process (tests, weir dev) shares the
		// histogram the first one registered.
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			panic(err)
		}
		r.duration = already.ExistingCollector.(*prometheus.HistogramVec)
	}
	return r
}

// RecordDuration observes how long a reconcile of kind/ns/name took.
func (r *Recorder) RecordDuration(kind, namespace, name string, start time.Time) {
	r.duration.WithLabelValues(kind, name, namespace).Observe(time.Since(start).Seconds())
}
