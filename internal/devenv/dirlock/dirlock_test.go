package dirlock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// holdEnv makes the test binary a lock holder (see TestMain): it takes the
// lock at the path given, optionally starts a child, prints "held <child
// pid>" and waits to be killed.
const holdEnv = "DIRLOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		hold(path, os.Getenv(holdEnv+"_CHILD") != "")
		return
	}
	os.Exit(m.Run())
}

func hold(path string, withChild bool) {
	if _, err := Acquire(path); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	child := 0
	if withChild {
		// Started after the lock is taken, as weir dev starts etcd and the
		// rest: were the descriptor inherited, the child would keep the lock.
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		child = cmd.Process.Pid
	}
	fmt.Println("held", child)
	select {}
}

// holder is a lock holder in a process of its own.
type holder struct {
	cmd   *exec.Cmd
	child int
}

func startHolder(t *testing.T, path string, withChild bool) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	if withChild {
		cmd.Env = append(cmd.Env, holdEnv+"_CHILD=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd}
	t.Cleanup(func() {
		h.kill(t)
		if h.child != 0 {
			_ = syscall.Kill(h.child, syscall.SIGKILL)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	if _, err := fmt.Sscanf(line, "held %d", &h.child); err != nil {
		t.Fatalf("holder: %s", line)
	}
	return h
}

// kill ends the holder with SIGKILL, which leaves it no chance to release,
// and reaps it.
func (h *holder) kill(t *testing.T) {
	t.Helper()
	if h.cmd.ProcessState != nil {
		return
	}
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAcquire takes the lock after each kind of previous state of the
// lock file: the holder it names either still has it (refused, naming its
// PID) or is gone, whatever the file says (taken over).
func TestAcquire(t *testing.T) {
	tests := []struct {
		name string
		// setup prepares the lock file at path and returns the PID a
		// refusal must name, 0 when the lock must be taken.
		setup func(t *testing.T, path string) int
	}{
		{"no lock file", func(*testing.T, string) int { return 0 }},
		{"empty file", func(t *testing.T, path string) int {
			writeFile(t, path, "")
			return 0
		}},
		{"file naming a process that has exited", func(t *testing.T, path string) int {
			writeFile(t, path, strconv.Itoa(deadPID(t))+"\n")
			return 0
		}},
		// The PID was reused by a process that is not a holder: alive,
		// and yet holding nothing.
		{"file naming a live process that does not hold it", func(t *testing.T, path string) int {
			writeFile(t, path, strconv.Itoa(os.Getppid())+"\n")
			return 0
		}},
		{"file with garbage", func(t *testing.T, path string) int {
			writeFile(t, path, "not a pid")
			return 0
		}},
		{"held in this process", func(t *testing.T, path string) int {
			l, err := Acquire(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Release() })
			return os.Getpid()
		}},
		{"held by another process", func(t *testing.T, path string) int {
			return startHolder(t, path, false).cmd.Process.Pid
		}},
		{"holder killed", func(t *testing.T, path string) int {
			startHolder(t, path, false).kill(t)
			return 0
		}},
		{"holder killed, the child it started still running", func(t *testing.T, path string) int {
			h := startHolder(t, path, true)
			h.kill(t)
			if err := syscall.Kill(h.child, 0); err != nil {
				t.Fatalf("the holder's child %d: %v", h.child, err)
			}
			return 0
		}},
		{"released", func(t *testing.T, path string) int {
			l, err := Acquire(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("lock file after Release: %v, want it removed", err)
			}
			return 0
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "weir-dev.lock")
			wantHolder := tt.setup(t, path)
			l, err := Acquire(path)
			if wantHolder != 0 {
				checkRefused(t, path, l, err, wantHolder)
				return
			}
			if err != nil {
				t.Fatalf("Acquire: %v, want the lock taken", err)
			}
			t.Cleanup(func() { _ = l.Release() })
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(data), fmt.Sprintf("%d\n", os.Getpid()); got != want {
				t.Errorf("lock file holds %q, want %q", got, want)
			}
		})
	}
}

func checkRefused(t *testing.T, path string, l *Lock, err error, pid int) {
	t.Helper()
	if err == nil {
		_ = l.Release()
		t.Fatalf("Acquire took a lock held by %d", pid)
	}
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("Acquire: %v, want a HeldError", err)
	}
	if held.PID != pid || held.Path != path {
		t.Errorf("HeldError{%s, %d}, want {%s, %d}", held.Path, held.PID, path, pid)
	}
	if want := fmt.Sprintf("%s is held by process %d", path, pid); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestReleaseTwice: a second Release, as a deferred one after an explicit
// one, is a no-op and does not remove a later holder's file.
func TestReleaseTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir-dev.lock")
	first, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Release() })
	if err := first.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("a second Release of the first lock removed the next holder's file: %v", err)
	}
	if _, err := Acquire(path); err == nil || !strings.Contains(err.Error(), "held by process") {
		t.Errorf("Acquire while the second holds it: %v, want refused", err)
	}
}

// TestOneHolderAtATime has holders take and release the lock as fast as
// they can. Release removes the file, so some open the old file just before
// it goes and lock it just after: they must not count as holders beside
// the one that locked the new file.
func TestOneHolderAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir-dev.lock")
	var holders, overlaps, taken atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 300 {
				l, err := Acquire(path)
				var held *HeldError
				if errors.As(err, &held) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				taken.Add(1)
				if holders.Add(1) > 1 {
					overlaps.Add(1)
				}
				time.Sleep(50 * time.Microsecond) // long enough for a second holder to show
				holders.Add(-1)
				if err := l.Release(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("taken %d times", taken.Load())
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d times a holder took the lock while another held it", n)
	}
}
