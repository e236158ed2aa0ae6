package benchenv

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// Phase is what one measured step cost: its Measurement, the allocations
// of the whole process during it, and the requests the controllers sent.
type Phase struct {
	Measurement
	Mallocs    uint64
	AllocBytes uint64
	// Requests are the controllers' requests during the step by method
	// and resource ("PATCH configmaps"), as RequestBreakdown names them.
	Requests map[string]int64
	// ControlPlaneCPU is the CPU time the API server and etcd used
	// during the step.
	ControlPlaneCPU time.Duration
}

// RequestTotal is the sum of p.Requests.
func (p Phase) RequestTotal() int64 {
	var n int64
	for _, v := range p.Requests {
		n += v
	}
	return n
}

// Breakdown lists p.Requests largest first, on one line.
func (p Phase) Breakdown() string {
	keys := slices.SortedFunc(maps.Keys(p.Requests), func(a, b string) int {
		if d := p.Requests[b] - p.Requests[a]; d != 0 {
			return int(d)
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, p.Requests[k]))
	}
	return strings.Join(parts, " ")
}

// ProfileDirEnv names the environment variable that, when set to a
// directory, makes MeasurePhase write a CPU profile of each step
// (<name>.cpu.pprof) and the allocation profiles before and after it
// (<name>.allocs-before.pprof, <name>.allocs.pprof: compare them with
// `go tool pprof -diff_base`).
const ProfileDirEnv = "WEIR_BENCH_PROFILE"

// MeasurePhase runs step as Measure does and adds its allocations and
// requests; name names its profiles.
func MeasurePhase(b *testing.B, name string, step func()) Phase {
	return measurePhase(b, name, nil, step)
}

// MeasurePhaseOn is MeasurePhase that also counts what the control plane
// of env spent (Phase.ControlPlaneCPU).
func MeasurePhaseOn(b *testing.B, env *testenv.Env, name string, step func()) Phase {
	return measurePhase(b, name, env, step)
}

func measurePhase(b *testing.B, name string, env *testenv.Env, step func()) Phase {
	b.Helper()
	dir := os.Getenv(ProfileDirEnv)
	before := requestCounts()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if dir != "" {
		writeProfile(b, "allocs", filepath.Join(dir, name+".allocs-before.pprof"))
		f, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
	}
	var cp0 time.Duration
	if env != nil {
		cp0 = ControlPlaneCPU(env)
	}
	t0 := time.Now()
	m := Measure(step)
	var cp time.Duration
	if env != nil {
		cp = ControlPlaneCPU(env) - cp0
	}
	if dir != "" {
		pprof.StopCPUProfile()
		writeProfile(b, "allocs", filepath.Join(dir, name+".allocs.pprof"))
	}
	runtime.ReadMemStats(&ms1)
	writeTrace(b, name, t0)
	p := Phase{Measurement: m, Mallocs: ms1.Mallocs - ms0.Mallocs, AllocBytes: ms1.TotalAlloc - ms0.TotalAlloc,
		Requests: map[string]int64{}, ControlPlaneCPU: cp}
	for k, v := range requestCounts() {
		if d := v - before[k]; d > 0 {
			p.Requests[k] = d
		}
	}
	return p
}

func writeProfile(b *testing.B, name, path string) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// requestCounts is a copy of the requests counted so far by method and
// resource.
func requestCounts() map[string]int64 {
	requests.mu.Lock()
	defer requests.mu.Unlock()
	return maps.Clone(requests.byKind)
}
