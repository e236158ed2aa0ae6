package dev

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRunOnce runs `weir dev --once` twice in a row in the same directory
// and checks that each run reports readiness and leaves no process behind.
func TestRunOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	dir := t.TempDir()
	for run := 1; run <= 2; run++ {
		var out bytes.Buffer
		res, err := Run(context.Background(), Options{Dir: dir, Once: true, Controllers: []string{"*"}}, &out)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out.String())
		}
		for _, want := range []string{"✔ control plane ready", "✔ CRDs established", "✔ controllers running: source",
			"✔ ready in", "kubeconfig: " + res.Kubeconfig, "✔ stopped"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("run %d: output lacks %q:\n%s", run, want, out.String())
			}
		}
		if len(res.PIDs) != 5 {
			t.Errorf("run %d: started %d processes, want 5: %v", run, len(res.PIDs), res.PIDs)
		}
		for name, pid := range res.PIDs {
			if alive(pid) {
				t.Errorf("run %d: %s (pid %d) still running after weir dev returned", run, name, pid)
			}
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat))
	return len(fields) > 2 && fields[2] != "Z"
}
