package dev

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/devenv/dirlock"
)

// commandEnv makes the test binary `weir dev` run with the arguments it
// holds, one per line, as cmd/weir runs it (internal/cli.Execute, which
// this package cannot import): SIGINT and SIGTERM cancel the context, an
// error is printed after ✗ and exits 1. A test so starts a weir dev in a
// process of its own, as a person does in another terminal.
const commandEnv = "WEIR_DEV_TEST_COMMAND"

func TestMain(m *testing.M) {
	if args := os.Getenv(commandEnv); args != "" {
		os.Exit(runCommand(strings.Split(args, "\n")))
	}
	os.Exit(m.Run())
}

func runCommand(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := NewCommand(streams, &clideps.Deps{Timeout: 3 * time.Minute})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "✗ %s\n", err)
		return 1
	}
	return 0
}

// TestClaimDir: the folder is emptied only once its lock is held; a folder
// another run holds is refused, with its owner's PID, and left as it is.
func TestClaimDir(t *testing.T) {
	previousRun := map[string]string{"ca.crt": "old CA", "kubeconfig": "old kubeconfig", "etcd/member/wal": "old data"}
	tests := []struct {
		name string
		// setup prepares dir and returns the PID of the run that holds it,
		// 0 when claimDir must take it.
		setup func(t *testing.T, dir string) int
		// want is what dir holds afterwards, the lock file aside.
		want map[string]string
	}{
		{"no folder", func(*testing.T, string) int { return 0 }, map[string]string{}},
		{"a previous run's folder", func(t *testing.T, dir string) int {
			writeFiles(t, dir, previousRun)
			return 0
		}, map[string]string{}},
		{"a previous run's folder, its lock file left by a killed run", func(t *testing.T, dir string) int {
			writeFiles(t, dir, previousRun)
			writeFiles(t, dir, map[string]string{lockFile: "999999999\n"})
			return 0
		}, map[string]string{}},
		{"a folder another run holds", func(t *testing.T, dir string) int {
			writeFiles(t, dir, previousRun)
			l, err := dirlock.Acquire(filepath.Join(dir, lockFile))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Release() })
			return os.Getpid()
		}, map[string]string{"ca.crt": "old CA", "kubeconfig": "old kubeconfig", "etcd/": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dev")
			owner := tt.setup(t, dir)
			lock, err := claimDir(dir)
			if owner == 0 {
				if err != nil {
					t.Fatalf("claimDir: %v", err)
				}
				t.Cleanup(func() { _ = lock.Release() })
				if got, want := readFile(t, filepath.Join(dir, lockFile)), fmt.Sprintf("%d\n", os.Getpid()); got != want {
					t.Errorf("lock file holds %q, want %q", got, want)
				}
			} else {
				if err == nil {
					_ = lock.Release()
					t.Fatal("claimDir took a folder another run holds")
				}
				want := fmt.Sprintf("another weir dev (pid %d) is running in %s: stop it first, or give this one a folder of its own with --dir <other folder>", owner, dir)
				if err.Error() != want {
					t.Errorf("error:\n%s\nwant:\n%s", err, want)
				}
			}
			got := readFiles(t, dir)
			delete(got, lockFile)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("folder afterwards (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClaimDirRefusesAFolderItDidNotMake gives claimDir folders that hold
// something: one a previous weir dev made (any of its files marks it) is
// emptied; one that holds none of weir dev's files (--dir ~, a checkout)
// is refused, and every file in it stays, no lock file added.
func TestClaimDirRefusesAFolderItDidNotMake(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		refused bool
	}{
		{"a home folder", map[string]string{".bashrc": "alias k=kubectl", "notes/todo.txt": "buy milk"}, true},
		{"a checkout", map[string]string{"go.mod": "module example.com/x", ".git/HEAD": "ref: refs/heads/main"}, true},
		{"an empty folder", map[string]string{}, false},
		{"a run before the lock file", map[string]string{"kubeconfig": "old", "ca.crt": "old CA"}, false},
		{"only a controller log", map[string]string{"weir-controller.log": "old log", "storage/a.tar.gz": "old"}, false},
		{"only etcd's data", map[string]string{"etcd/member/wal": "old data"}, false},
		{"a lock file and something else", map[string]string{lockFile: "12\n", "fleet/README": "old"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dev")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, tt.files)
			lock, err := claimDir(dir)
			if !tt.refused {
				if err != nil {
					t.Fatalf("claimDir: %v", err)
				}
				_ = lock.Release()
				got := readFiles(t, dir)
				delete(got, lockFile)
				if len(got) != 0 {
					t.Errorf("left %v in a folder weir dev made", got)
				}
				return
			}
			if err == nil {
				_ = lock.Release()
				t.Fatal("claimDir took a folder weir dev did not make")
			}
			msg := dir + " is not empty and holds none of weir dev's files: weir dev empties its folder, so it refuses this one; " +
				"give --dir a new or empty folder"
			if err.Error() != msg {
				t.Errorf("error:\n%s\nwant:\n%s", err, msg)
			}
			want := map[string]string{} // readFiles' view: one level
			for name, content := range tt.files {
				if top, _, nested := strings.Cut(name, "/"); nested {
					want[top+"/"] = ""
				} else {
					want[name] = content
				}
			}
			if diff := cmp.Diff(want, readFiles(t, dir)); diff != "" {
				t.Errorf("folder afterwards (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunRefusesAFolderInUse is issue 33's scene: `weir dev` runs in one
// terminal, `weir dev --once` starts in another on the same folder. The
// second must stop at once with an error naming the first one's PID and
// --dir, and leave every file of the first byte for byte as it was: its
// control plane runs on the certificates and kubeconfig there. When the
// first one gets SIGTERM it stops everything and gives the folder up.
func TestRunRefusesAFolderInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	dir := filepath.Join(t.TempDir(), "dev")
	first, stderr := startDev(t, dir)
	before := readFiles(t, dir)
	for _, name := range []string{"ca.crt", "server.crt", "server.key", "admin.crt", "admin.key", "sa.key", "sa.pub", "kubeconfig"} {
		if _, ok := before[name]; !ok {
			t.Fatalf("the running weir dev has no %s: %v", name, slices.Sorted(maps.Keys(before)))
		}
	}
	if got, want := before[lockFile], fmt.Sprintf("%d\n", first.Process.Pid); got != want {
		t.Errorf("lock file of the running weir dev holds %q, want %q", got, want)
	}

	var out, errOut bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, &clideps.Deps{Timeout: time.Minute})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs([]string{"--once", "--dir", dir})
	// Without the lock, this run would start a control plane of its own:
	// bounded, so that the test fails rather than hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	err := cmd.ExecuteContext(ctx)
	t.Logf("second weir dev returned in %s: %v", time.Since(began).Round(time.Microsecond), err)
	want := fmt.Sprintf("another weir dev (pid %d) is running in %s: stop it first, or give this one a folder of its own with --dir <other folder>", first.Process.Pid, dir)
	if err == nil || err.Error() != want {
		t.Errorf("second weir dev --once: %v\nwant: %s", err, want)
	}
	if out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("second weir dev printed:\n%s%s", out.String(), errOut.String())
	}
	if diff := cmp.Diff(before, readFiles(t, dir)); diff != "" {
		t.Errorf("the running weir dev's files changed (-before +after):\n%s", diff)
	}
	checkNodeReady(t, filepath.Join(dir, "kubeconfig"))

	pids := stopDev(t, first, stderr)
	if len(pids) != 5 {
		t.Errorf("first weir dev reported %d processes stopped, want 5: %v", len(pids), pids)
	}
	assertStopped(t, pids)
	if _, err := os.Stat(filepath.Join(dir, lockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after weir dev stopped: %v, want it removed", err)
	}
	l, err := dirlock.Acquire(filepath.Join(dir, lockFile))
	if err != nil {
		t.Fatalf("the folder after weir dev stopped: %v", err)
	}
	_ = l.Release()
}

// startDev starts `weir dev --dir dir` in a process of its own and returns
// once it says it is running, with what it has printed on stderr so far
// (and will print).
func startDev(t *testing.T, dir string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), commandEnv+"="+strings.Join([]string{"--dir", dir}, "\n"))
	cmd.Stdout = io.Discard
	// Should the test die first, the kernel ends this weir dev, and
	// weir dev's own children with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	stderr := &syncBuffer{}
	running := make(chan struct{})
	go func() {
		s := bufio.NewScanner(pipe)
		for s.Scan() {
			fmt.Fprintln(stderr, s.Text())
			if strings.HasPrefix(s.Text(), "◎ running") {
				close(running)
			}
		}
	}()
	select {
	case <-running:
	case <-time.After(4 * time.Minute):
		t.Fatalf("weir dev is not running after 4m:\n%s", stderr.String())
	}
	return cmd, stderr
}

// stopDev sends SIGTERM to the weir dev, waits for it to exit 0 and
// returns the PIDs it says it stopped.
func stopDev(t *testing.T, cmd *exec.Cmd, stderr *syncBuffer) map[string]int {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Logf("first weir dev, stderr:\n%s", stderr.String())
		if err != nil {
			t.Fatalf("weir dev after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("weir dev still running a minute after SIGTERM:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "✔ stopped every process weir dev started") {
		t.Error("weir dev did not say it stopped every process")
	}
	pids := map[string]int{}
	for _, m := range regexp.MustCompile(`([a-z-]+) \(pid (\d+)\)`).FindAllStringSubmatch(stderr.String(), -1) {
		pids[m[1]], _ = strconv.Atoi(m[2])
	}
	return pids
}

// checkNodeReady asserts that the control plane behind kubeconfig still
// answers with the credentials in it and its node is Ready.
func checkNodeReady(t *testing.T, kubeconfig string) {
	t.Helper()
	var node corev1.Node
	if err := clientFor(t, kubeconfig).Get(context.Background(), client.ObjectKey{Name: "weir-node"}, &node); err != nil {
		t.Fatalf("the running weir dev's API server: %v", err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return
		}
	}
	t.Errorf("node %s is not Ready: %v", node.Name, node.Status.Conditions)
}

// readFiles returns what dir holds at its top: each regular file's
// content by name, each folder as its name and "/". Logs, which a running
// weir dev keeps writing, are left out. A missing dir holds nothing.
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}
	}
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		switch {
		case e.IsDir():
			files[e.Name()+"/"] = ""
		case e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".log"):
			files[e.Name()] = readFile(t, filepath.Join(dir, e.Name()))
		}
	}
	return files
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
