package controlplane

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// process is one child of the control plane. Its output goes to
// <dir>/<name>.log so a failure can be explained afterwards.
type process struct {
	name    string
	cmd     *exec.Cmd
	logFile string
	exited  chan struct{}
	err     error
}

func startProcess(dir, name, binary string, args, env []string) (*process, error) {
	logFile := filepath.Join(dir, name+".log")
	out, err := os.Create(logFile)
	if err != nil {
		return nil, fmt.Errorf("creating log for %s: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.Env = append(os.Environ(), env...)
	// Pdeathsig kills the child if we die without calling Stop; Setpgid
	// keeps a Ctrl-C in the terminal from reaching it before we can stop it
	// in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logFile: logFile, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.exited)
	}()
	return p, nil
}

// PID is the operating-system process ID.
func (p *process) PID() int { return p.cmd.Process.Pid }

// running reports whether the process has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, waits up to grace, then SIGKILLs. It only ever signals
// the PID it started.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// exitError describes why a process ended early, with the tail of its log.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited early (%w); last lines of %s:\n%s", p.name, p.err, p.logFile, tail(p.logFile, 15))
}

func tail(file string, lines int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	end := len(data)
	for i := len(data) - 1; i >= 0 && lines >= 0; i-- {
		if data[i] == '\n' {
			lines--
			if lines < 0 {
				return string(data[i+1 : end])
			}
		}
	}
	return string(data[:end])
}

// freePort asks the kernel for an unused port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// waitFor polls check every interval until it succeeds, the process dies or
// the timeout passes.
func waitFor(p *process, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if p != nil && !p.running() {
			return p.exitError()
		}
		if last = check(); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("not ready after %s", timeout), last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
