package benchenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// childStepEnv names the step a child process of a benchmark binary runs.
const childStepEnv = "WEIR_BENCH_CHILD_STEP"

// ChildMain is the TestMain of a benchmark whose steps run in child
// processes of the test binary, so that each step's CPU time and peak RSS
// are its own: started by RunChild, the binary runs one step and exits (2,
// after printing the error, when the step fails); otherwise it runs the
// tests and benchmarks.
func ChildMain(m *testing.M, run func(step string) error) {
	if step := os.Getenv(childStepEnv); step != "" {
		if err := run(step); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Child is what one child process cost.
type Child struct {
	Wall, CPU time.Duration // CPU: user and system
	PeakRSS   float64       // MiB
	Stderr    string
}

// RunChild runs step in a child process of the test binary, with env
// (KEY=value) added to this process's environment, and returns its cost.
// A failed step fails b with the child's standard error.
func RunChild(b testing.TB, step string, env ...string) Child {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childStepEnv+"="+step), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("step %s: %v\n%s", step, err, stderr.String())
	}
	c := Child{Wall: time.Since(start), Stderr: stderr.String(),
		CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.PeakRSS = float64(ru.Maxrss) / 1024 // Linux reports kilobytes
	}
	return c
}
