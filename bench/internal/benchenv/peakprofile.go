package benchenv

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// peakProfiles keeps, with WEIR_BENCH_PROFILE set, the heap profile of
// each child process (Flux's controllers and weir-controller both serve
// /debug/pprof/ on their metrics address) taken when the phase's resident
// set last reached a new peak: what was live when the memory was most.
// A profile is asked for at most every two seconds and only when the peak
// grew by 2 % since the last one, so that asking does not become the load.
type peakProfiles struct {
	dir   string
	procs []*fluxProcess

	mu       sync.Mutex
	last     time.Time
	lastPeak float64
	heaps    map[string][]byte
	busy     bool
	// split is each process's anonymous and file-backed resident MiB
	// at the phase's peak.
	split map[string][2]float64
}

func newPeakProfiles(procs []*fluxProcess) *peakProfiles {
	return &peakProfiles{dir: os.Getenv(ProfileDirEnv), procs: procs, heaps: map[string][]byte{}, split: map[string][2]float64{}}
}

// peak notes a new peak of rss MiB; it fetches the profiles in the
// background when due.
func (p *peakProfiles) peak(rss float64) {
	if p.dir == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, proc := range p.procs {
		status := fmt.Sprintf("/proc/%d/status", proc.cmd.Process.Pid)
		p.split[proc.name] = [2]float64{statusMiB(status, "RssAnon:"), statusMiB(status, "RssFile:")}
	}
	if p.busy || time.Since(p.last) < 2*time.Second || rss < p.lastPeak*1.02 {
		return
	}
	p.busy, p.last, p.lastPeak = true, time.Now(), rss
	go func() {
		got := map[string][]byte{}
		for _, proc := range p.procs {
			if b, err := fetchHeap(proc.metrics); err == nil {
				got[proc.name] = b
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		for name, b := range got {
			p.heaps[name] = b
		}
		p.busy = false
	}()
}

// write stores each process's last peak profile as
// <dir>/<process>-<pid>.peak.heap.pprof.
func (p *peakProfiles) write(b testing.TB) {
	if p.dir == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, proc := range p.procs {
		split := p.split[proc.name]
		b.Logf("%s at the phase's peak: %.0f MiB anonymous, %.0f MiB file-backed (its binary's pages among them)", proc.name, split[0], split[1])
		heap, ok := p.heaps[proc.name]
		if !ok {
			continue
		}
		path := filepath.Join(p.dir, fmt.Sprintf("%s-%d.peak.heap.pprof", proc.name, proc.cmd.Process.Pid))
		if err := os.WriteFile(path, heap, 0o644); err != nil {
			b.Logf("writing %s: %v", path, err)
			continue
		}
		b.Logf("heap profile of %s at its peak: %s", proc.name, path)
	}
}

func fetchHeap(addr string) ([]byte, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET heap profile: %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}
