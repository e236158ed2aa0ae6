package events

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/app"
)

// Environment of the child process that runs the notification controller.
const (
	childEnv      = "WEIR_BENCH_EVENTS_CHILD"
	kubeconfigEnv = "WEIR_BENCH_EVENTS_KUBECONFIG"
	addrEnv       = "WEIR_BENCH_EVENTS_ADDR"
	intervalEnv   = "WEIR_BENCH_EVENTS_RATE_LIMIT_INTERVAL"
)

// runChild is the child's main: the notification controller alone, as
// Flux's notification-controller Deployment runs it (--events-addr is the
// address it listens on), until its standard input closes. Once the event
// server answers it prints "ready <CPU nanoseconds so far>".
func runChild() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(kubeconfigEnv))
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	interval, err := time.ParseDuration(os.Getenv(intervalEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", intervalEnv, err)
	}
	opts := app.DefaultOptions()
	opts.Controllers = []string{"notification"}
	opts.MetricsAddr, opts.HealthAddr, opts.ReceiverAddr, opts.LogLevel = "0", "0", "0", "error"
	opts.EventsAddr, opts.RateLimitInterval = os.Getenv(addrEnv), interval
	opts.SkipNameValidation = true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, opts) }()
	for {
		c, err := net.DialTimeout("tcp", opts.EventsAddr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-done:
			cancel()
			return fmt.Errorf("controller stopped: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	fmt.Printf("ready %d\n", benchenv.CPUTime().Nanoseconds())
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		return nil
	}
}

// controller is the running child process.
type controller struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	readyCPU time.Duration
	stderr   *strings.Builder
}

// startController starts the child and waits until its event server
// answers.
func startController(b *testing.B, kubeconfig, addr string, interval time.Duration) *controller {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", kubeconfigEnv+"="+kubeconfig, addrEnv+"="+addr,
		intervalEnv+"="+interval.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	c := &controller{cmd: cmd, stdin: stdin, stderr: &strings.Builder{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		b.Fatalf("controller did not start: %v\n%s", err, c.stderr.String())
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "ready ")), 10, 64)
	if err != nil {
		b.Fatalf("controller said %q", line)
	}
	c.readyCPU = time.Duration(ns)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return c
}

// stop ends the child and returns its CPU time since it was ready and its
// peak resident set (MiB) over its life.
func (c *controller) stop(b *testing.B) (time.Duration, float64) {
	b.Helper()
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		b.Errorf("controller: %v\n%s", err, c.stderr.String())
	}
	ps := c.cmd.ProcessState
	cpu := ps.UserTime() + ps.SystemTime() - c.readyCPU
	var rss float64
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rss = float64(ru.Maxrss) / 1024
	}
	return cpu, rss
}
