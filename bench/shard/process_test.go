package shard

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// buildController builds cmd/weir-controller into a temporary directory
// of b, with the build tags of make build (the Makefile's GOTAGS).
func buildController(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "weir-controller")
	out, err := exec.Command("go", "build", "-tags", "kustomize_disable_go_plugin_support", "-o", bin,
		"github.com/weir-gitops/weir/cmd/weir-controller").CombinedOutput()
	if err != nil {
		b.Fatalf("go build weir-controller: %v\n%s", err, out)
	}
	return bin
}

// replica is one weir-controller process of the benchmark's Deployment.
type replica struct {
	cmd     *exec.Cmd
	metrics string // its metrics address
	log     string
}

// startReplica starts weir-controller with --shard-mode=auto (and
// --enable-leader-election, which auto overrides, as Flux's manifests
// set it), the source and kustomize controllers at --concurrent, its own
// storage and metrics addresses, RUNTIME_NAMESPACE=ns (where the
// membership Leases are). It is killed when b ends.
func startReplica(b *testing.B, env *testenv.Env, bin, ns string) *replica {
	b.Helper()
	storage := benchenv.FreeAddr(b)
	r := &replica{metrics: benchenv.FreeAddr(b), log: filepath.Join(logDir(b), fmt.Sprintf("replica-%s.log", storage[strings.LastIndexByte(storage, ':')+1:]))}
	logFile, err := os.Create(r.log)
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	r.cmd = exec.Command(bin, "--controllers=source,kustomize", "--shard-mode=auto", "--enable-leader-election=true",
		fmt.Sprintf("--concurrent=%d", concurrency), "--log-level="+logLevel(),
		"--metrics-addr="+r.metrics, "--health-addr=0",
		"--storage-path="+b.TempDir(), "--storage-addr="+storage, "--storage-adv-addr="+storage)
	r.cmd.Env = append(os.Environ(), "KUBECONFIG="+env.ControlPlane.KubeconfigPath(), "RUNTIME_NAMESPACE="+ns)
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	// A replica outlives no benchmark that is itself killed.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		b.Fatalf("starting weir-controller: %v", err)
	}
	b.Cleanup(func() {
		r.kill()
		if b.Failed() {
			if data, err := os.ReadFile(r.log); err == nil {
				b.Logf("weir-controller log (end):\n%s", data[max(0, len(data)-4000):])
			}
		}
	})
	return r
}

// logDir is where the replicas' logs go: $WEIR_BENCH_LOGDIR, kept, or a
// temporary directory of b.
func logDir(b *testing.B) string {
	if dir := os.Getenv("WEIR_BENCH_LOGDIR"); dir != "" {
		return dir
	}
	return b.TempDir()
}

// logLevel is the replicas' --log-level: error, or debug (the per-object
// reconcile log) when their logs are kept.
func logLevel() string {
	if os.Getenv("WEIR_BENCH_LOGDIR") != "" {
		return "debug"
	}
	return "error"
}

// kill sends SIGKILL to the replica (by its PID) and reaps it.
func (r *replica) kill() {
	if r.cmd == nil {
		return
	}
	_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
	_ = r.cmd.Wait()
	r.cmd = nil
}

func (r *replica) pid() int { return r.cmd.Process.Pid }

// requests is the sum of the replica's rest_client_requests_total: every
// request its clients sent to the API server.
func (r *replica) requests(b *testing.B) float64 {
	b.Helper()
	resp, err := http.Get("http://" + r.metrics + "/metrics")
	if err != nil {
		b.Fatalf("reading a replica's metrics: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatalf("reading a replica's metrics: %v", err)
	}
	var n float64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			n += v
		}
	}
	return n
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times on Linux.
const clockTick = 100

// processCPU is the user and system time process pid has used.
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("reading the CPU time of %d: %v", pid, err)
	}
	// The fields after "(comm)": state is field 3, utime 14, stime 15.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTick
}
