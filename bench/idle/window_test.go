package idle

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/weir-gitops/weir/bench/internal/benchenv"
)

// idleFigures are what the fleet cost over the idle window.
type idleFigures struct {
	cpu        time.Duration
	requests   benchenv.Phase // only its Requests
	reconciles float64
}

// watchIdle sleeps through the idle window and measures it: the process's
// CPU, the controllers' requests by method and resource, and the
// Kustomization reconciles (benchenv.Reconciles).
// With WEIR_BENCH_PROFILE set it writes a CPU profile of the window
// (idle-<n>.cpu.pprof).
func watchIdle(b *testing.B, n int, window time.Duration) idleFigures {
	b.Helper()
	if dir := os.Getenv(benchenv.ProfileDirEnv); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("idle-%d.cpu.pprof", n)))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	req0, rec0, cpu0 := benchenv.RequestCounts(), benchenv.Reconciles(b, "kustomization"), benchenv.CPUTime()
	time.Sleep(window)
	fig := idleFigures{cpu: benchenv.CPUTime() - cpu0, reconciles: benchenv.Reconciles(b, "kustomization") - rec0}
	fig.requests.Requests = map[string]int64{}
	for k, v := range benchenv.RequestCounts() {
		if d := v - req0[k]; d > 0 {
			fig.requests.Requests[k] = d
		}
	}
	return fig
}

func (f idleFigures) report(b *testing.B, window time.Duration) {
	requests := f.requests.RequestTotal()
	b.ReportMetric(100*f.cpu.Seconds()/window.Seconds(), "%cpu-idle")
	b.ReportMetric(float64(requests)/window.Seconds(), "req/s-idle")
	b.ReportMetric(f.reconciles/window.Seconds(), "reconciles/s-idle")
	if f.reconciles > 0 {
		b.ReportMetric(float64(f.cpu.Microseconds())/1000/f.reconciles, "cpu-ms/reconcile-idle")
		b.ReportMetric(float64(requests)/f.reconciles, "requests/reconcile-idle")
	}
}
