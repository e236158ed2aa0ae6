package benchenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// FluxBinDirEnv names the environment variable that points the *BesideFlux
// benchmarks at a directory holding Flux's own source-controller,
// kustomize-controller and helm-controller binaries, built from their
// module sources outside this repository (docs/design/0038). Without it
// those benchmarks skip.
const FluxBinDirEnv = "WEIR_BENCH_FLUX_BIN_DIR"

// The sets of Flux's binaries a benchmark runs, in the order StartFlux
// starts them: source-controller first, since the other serves nothing
// without its artifacts.
var (
	FluxKustomize = []string{"source-controller", "kustomize-controller"}
	FluxHelm      = []string{"source-controller", "helm-controller"}
)

// FluxBinDir is $WEIR_BENCH_FLUX_BIN_DIR; it skips b when the variable is
// not set or the directory lacks one of controllers' binaries, and logs
// their versions (FluxVersion) otherwise.
func FluxBinDir(b testing.TB, controllers []string) string {
	b.Helper()
	dir := os.Getenv(FluxBinDirEnv)
	if dir == "" {
		b.Skipf("Flux side by side: set %s to a directory with Flux's %s binaries (docs/design/0038)",
			FluxBinDirEnv, strings.Join(controllers, " and "))
	}
	for _, name := range controllers {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			b.Skipf("Flux side by side: %s: %v", FluxBinDirEnv, err)
		}
	}
	b.Logf("Flux: %s", FluxVersion(dir, controllers))
	return dir
}

// Children are controllers running as child processes of the benchmark,
// against its control plane: Flux's (StartFlux) or weir-controller
// (StartWeirProcess).
type Children struct {
	procs []*fluxProcess
}

type fluxProcess struct {
	name    string
	cmd     *exec.Cmd
	log     string // its standard output and error
	exited  chan struct{}
	metrics string // its --metrics-addr, which serves /debug/pprof/
}

// child is one binary to start and its arguments, less the metrics and
// health addresses startChildren adds.
type child struct {
	bin  string
	argv []string
}

// childArgs are the arguments Flux's controllers and weir-controller
// share in a benchmark: every namespace watched, leader election off, logs
// at error level as weir's in-process controllers run, --concurrent.
func childArgs(concurrent int) []string {
	return []string{
		"--watch-all-namespaces=true", "--enable-leader-election=false", "--log-level=error",
		"--concurrent=" + strconv.Itoa(concurrent),
	}
}

// storageArgs makes a storage directory under work and returns the
// artifact storage flags of a source controller: that directory and a
// free 127.0.0.1 port as both the bound and the advertised address.
func storageArgs(b testing.TB, work string) []string {
	b.Helper()
	storage := filepath.Join(work, "storage")
	if err := os.Mkdir(storage, 0o755); err != nil {
		b.Fatal(err)
	}
	addr := freeAddr(b)
	return []string{"--storage-path=" + storage, "--storage-addr=" + addr, "--storage-adv-addr=" + addr}
}

// StartFlux starts Flux's controllers (FluxKustomize or FluxHelm) from dir
// against env's control plane, with childArgs and Flux's other defaults,
// and waits until each reports ready. b's cleanup stops them if Stop has
// not.
func StartFlux(b testing.TB, env *testenv.Env, dir string, controllers []string, concurrent int) *Children {
	b.Helper()
	work := b.TempDir()
	var children []child
	for _, name := range controllers {
		argv := childArgs(concurrent)
		if name == "source-controller" {
			argv = append(argv, storageArgs(b, work)...)
		}
		children = append(children, child{bin: filepath.Join(dir, name), argv: argv})
	}
	return startChildren(b, env, work, children)
}

// WeirBinEnv names the environment variable that may point a *BesideFlux
// benchmark at a weir-controller binary (make build's bin/weir-controller):
// with it, the benchmark also runs weir's controllers as one child
// process, measured as Flux's are, beside its in-process run.
const WeirBinEnv = "WEIR_BENCH_WEIR_BIN"

// StartWeirProcess starts the weir-controller binary bin with
// --controllers=controllers against env's control plane, with childArgs
// and the storage flags, as StartFlux starts Flux's, and waits until it
// reports ready. Its requests are not counted and it is not profiled: it
// runs outside this process.
func StartWeirProcess(b testing.TB, env *testenv.Env, bin string, controllers []string, concurrent int) *Children {
	b.Helper()
	work := b.TempDir()
	argv := append(childArgs(concurrent), storageArgs(b, work)...)
	argv = append(argv, "--controllers="+strings.Join(controllers, ","))
	return startChildren(b, env, work, []child{{bin: bin, argv: argv}})
}

// startChildren starts children in order with the control plane's admin
// kubeconfig, each with its metrics and health on free ports, waiting for
// each one's /readyz before the next.
func startChildren(b testing.TB, env *testenv.Env, work string, children []child) *Children {
	b.Helper()
	f := &Children{}
	b.Cleanup(f.Stop)
	for _, c := range children {
		health, metrics := freeAddr(b), freeAddr(b)
		argv := append(append([]string{}, c.argv...), "--metrics-addr="+metrics, "--health-addr="+health)
		p, err := startFluxProcess(c.bin, work, argv, env.ControlPlane.KubeconfigPath())
		if err != nil {
			b.Fatal(err)
		}
		p.metrics = metrics
		f.procs = append(f.procs, p)
		if err := p.waitReady(health, 2*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

func startFluxProcess(bin, work string, argv []string, kubeconfig string) (*fluxProcess, error) {
	name := filepath.Base(bin)
	p := &fluxProcess{name: name, log: filepath.Join(work, name+".log"), exited: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		return nil, fmt.Errorf("creating %s's log: %w", name, err)
	}
	path, err := prepareBinary(bin, work)
	if err != nil {
		out.Close()
		return nil, err
	}
	p.cmd = exec.Command(path, argv...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p.cmd.Stdout, p.cmd.Stderr, p.cmd.Dir = out, out, work
	if err := p.cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		out.Close()
		close(p.exited)
	}()
	return p, nil
}

// waitReady polls the process's /readyz until it answers 200, and fails
// early with its log when it exits.
func (p *fluxProcess) waitReady(health string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready:\n%s", p.name, p.tail())
		case <-time.After(200 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+health+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("%s not ready after %s:\n%s", p.name, timeout, p.tail())
}

// tail is the end of the process's log, for a failure message.
func (p *fluxProcess) tail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// Stop ends the controllers by PID (SIGTERM, then SIGKILL after 30 s)
// and waits until they have exited. It is safe to call twice.
func (f *Children) Stop() {
	for _, p := range f.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	f.procs = nil
}

// FluxVersion names the release of each of controllers' binaries in dir
// as its build info records it: built from an unpacked module directory
// the main module is "(devel)", so it is the version of the controller's
// api module, which each release requires at its own version
// ("kustomize-controller v1.9.6").
func FluxVersion(dir string, controllers []string) string {
	var parts []string
	for _, name := range controllers {
		v := "?"
		if out, err := exec.Command("go", "version", "-m", filepath.Join(dir, name)).Output(); err == nil {
			for _, line := range strings.Split(string(out), "\n") {
				if f := strings.Fields(line); len(f) >= 3 && f[0] == "dep" && f[1] == "github.com/fluxcd/"+name+"/api" {
					v = f[2]
					break
				}
			}
		}
		parts = append(parts, name+" "+v)
	}
	return strings.Join(parts, ", ")
}

// MeasurePhase runs step while sampling the controllers' resident sets
// (their sum) every 100 ms, as Measure samples the benchmark process, and
// returns the wall time, the CPU time the controllers and the control
// plane used during it and the controllers' peak; it fails b when one of
// them exited meanwhile. Flux's requests are not
// counted: they do not pass through this process.
func (f *Children) MeasurePhase(b testing.TB, env *testenv.Env, step func()) Phase {
	b.Helper()
	pids := make([]int, len(f.procs))
	for i, p := range f.procs {
		pids[i] = p.cmd.Process.Pid
	}
	rss := func() float64 {
		var sum float64
		for _, pid := range pids {
			sum += ProcessRSS(pid)
		}
		return sum
	}
	m := Measurement{RSSBefore: rss()}
	peaks := newPeakProfiles(f.procs)
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			r := rss()
			mu.Lock()
			if r > m.PeakRSS {
				peaks.peak(r)
			}
			m.PeakRSS = max(m.PeakRSS, r)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	cpu0, cp0 := ProcessesCPU(pids...), ControlPlaneCPU(env)
	start := time.Now()
	step()
	m.Elapsed = time.Since(start)
	m.CPU = ProcessesCPU(pids...) - cpu0
	cp := ControlPlaneCPU(env) - cp0
	close(stop)
	wg.Wait()
	peaks.write(b)
	for _, p := range f.procs {
		select {
		case <-p.exited:
			b.Fatalf("%s exited during the measured step:\n%s", p.name, p.tail())
		default:
		}
	}
	return Phase{Measurement: m, ControlPlaneCPU: cp}
}

// ControlPlaneCPU is the CPU time the API server and etcd have used so
// far: the difference across a step is what the controllers' requests
// cost the control plane, counted the same way for Flux and weir.
func ControlPlaneCPU(env *testenv.Env) time.Duration {
	pids := env.ControlPlane.PIDs()
	return ProcessesCPU(pids["kube-apiserver"], pids["etcd"])
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ProcessesCPU is the user and system time the processes have used, from
// /proc/<pid>/stat (all their threads); a process that is gone counts 0.
func ProcessesCPU(pids ...int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		ticks += statTicks(string(data))
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// statTicks is utime + stime (fields 14 and 15) of a /proc/<pid>/stat
// line, in clock ticks; 0 when the line is too short. The command name
// (field 2) is in parentheses and may hold spaces and parentheses itself.
func statTicks(stat string) int64 {
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// freeAddr is a free 127.0.0.1:port.
func freeAddr(b testing.TB) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// ReportWeir reports weir's in-process phase of n objects (each a
// unit, "ks" or "hr") beside the floor: time, CPU, RSS before and at the
// peak, peak heap, the API server's and etcd's CPU and the requests per
// object, and logs the requests by method and resource with the load
// average.
func ReportWeir(b *testing.B, m Phase, floor time.Duration, n int, unit string) {
	b.Helper()
	b.ReportMetric(m.Elapsed.Seconds(), "s/all-ready")
	b.ReportMetric(floor.Seconds(), "s/floor")
	b.ReportMetric(m.Elapsed.Seconds()/floor.Seconds(), "x-floor")
	b.ReportMetric(m.CPU.Seconds(), "cpu-s")
	b.ReportMetric(m.RSSBefore, "MiB-rss-before")
	b.ReportMetric(m.PeakRSS, "MiB-peak-rss")
	b.ReportMetric(m.PeakHeap, "MiB-peak-heap")
	b.ReportMetric(m.ControlPlaneCPU.Seconds(), "apiserver-etcd-cpu-s")
	b.ReportMetric(float64(m.RequestTotal())/float64(n), "api-requests/"+unit)
	b.Logf("load average %s; API requests by method and resource: %s", LoadAverage(), m.Breakdown())
}

// ReportFlux reports Flux's figures for a phase whose end is "all ready"
// (flux-s/all-ready, flux-x-floor beside floor, flux-cpu-s,
// flux-MiB-peak-rss, flux-apiserver-etcd-cpu-s) and logs them with the
// load average.
func ReportFlux(b *testing.B, flux Phase, floor time.Duration) {
	b.Helper()
	b.ReportMetric(flux.Elapsed.Seconds(), "flux-s/all-ready")
	b.ReportMetric(flux.Elapsed.Seconds()/floor.Seconds(), "flux-x-floor")
	b.ReportMetric(flux.CPU.Seconds(), "flux-cpu-s")
	b.ReportMetric(flux.PeakRSS, "flux-MiB-peak-rss")
	b.ReportMetric(flux.ControlPlaneCPU.Seconds(), "flux-apiserver-etcd-cpu-s")
	b.Logf("Flux: %.1f s, %.1f CPU-s, peak RSS %.0f MiB (%.0f before), API server and etcd %.1f CPU-s; load average %s",
		flux.Elapsed.Seconds(), flux.CPU.Seconds(), flux.PeakRSS, flux.RSSBefore, flux.ControlPlaneCPU.Seconds(), LoadAverage())
}

// ReportBesideFlux reports weir ÷ Flux for a phase measured under both:
// wall time, CPU seconds of the controllers, their peak RSS and the CPU
// seconds of the API server and etcd, each metric named prefix + "x-flux-…".
func ReportBesideFlux(b *testing.B, prefix string, weir, flux Phase) {
	b.Helper()
	ratio := func(w, f float64, unit string) {
		if f > 0 {
			b.ReportMetric(w/f, prefix+"x-flux-"+unit)
		}
	}
	ratio(weir.Elapsed.Seconds(), flux.Elapsed.Seconds(), "time")
	ratio(weir.CPU.Seconds(), flux.CPU.Seconds(), "cpu")
	ratio(weir.PeakRSS, flux.PeakRSS, "rss")
	ratio(weir.ControlPlaneCPU.Seconds(), flux.ControlPlaneCPU.Seconds(), "apiserver-etcd-cpu")
}
