package benchenv

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Measurement is what one measured step cost the benchmark process (the
// controllers run in it; the control plane runs in other processes).
type Measurement struct {
	Elapsed           time.Duration
	CPU               time.Duration
	RSSBefore         float64 // MiB, after a GC, before the step
	PeakRSS, PeakHeap float64 // MiB
}

// Measure runs step while sampling the process's resident set and heap
// every 100 ms. With WEIR_BENCH_HEAPPROFILE set it writes a heap profile
// when step ends (profile.go).
func Measure(step func()) Measurement {
	runtime.GC()
	var m Measurement
	m.RSSBefore = CurrentRSS()
	var mu sync.Mutex
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// runtime/metrics rather than ReadMemStats, which stops the world
		// (0.15 CPU-s of a fan-out of 200 at 10 a second).
		heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}} // HeapAlloc
		for !stop.Load() {
			rss := CurrentRSS()
			metrics.Read(heap)
			mu.Lock()
			m.PeakRSS = max(m.PeakRSS, rss)
			m.PeakHeap = max(m.PeakHeap, float64(heap[0].Value.Uint64())/(1<<20))
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	cpu0 := CPUTime()
	start := time.Now()
	step()
	m.Elapsed = time.Since(start)
	m.CPU = CPUTime() - cpu0
	stop.Store(true)
	wg.Wait()
	if err := writeHeapProfile(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return m
}

// CPUTime is the user and system time the process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// CurrentRSS is VmRSS of /proc/self/status in MiB.
func CurrentRSS() float64 { return statusMiB("/proc/self/status", "VmRSS:") }

// ProcessRSS is VmRSS of process pid in MiB (0 once it is gone).
func ProcessRSS(pid int) float64 { return statusMiB(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:") }

// PeakRSSOf is VmHWM of process pid in MiB: its peak resident set (0 when
// the process is gone).
func PeakRSSOf(pid int) float64 { return statusMiB(fmt.Sprintf("/proc/%d/status", pid), "VmHWM:") }

// statusMiB is the field (in kB) of a /proc/<pid>/status file in MiB.
func statusMiB(path, field string) float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// FreeAddr is a free port of 127.0.0.1.
func FreeAddr(b testing.TB) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Counts returns the sizes a benchmark runs at: the comma-separated
// integers of the environment variable env, or def when it is not set.
func Counts(b *testing.B, env string, def []int) []int {
	s := os.Getenv(env)
	if s == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			b.Fatalf("%s: %v", env, err)
		}
		out = append(out, n)
	}
	return out
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes, as
// /proc/loadavg says: the machine is shared, and a figure means little
// without it.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}
