package benchenv

import (
	"os"
	"testing"
)

func TestStatTicks(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       int64
	}{
		{"plain", "42 (kustomize-contr) S 1 42 42 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 12 0 100 0", 1290},
		{"name with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 1 0", 15},
		{"too short", "7 (x) R 1 2", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statTicks(tc.stat); got != tc.want {
				t.Errorf("statTicks = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestOwnProcess reads this process's /proc entries as Flux's are read.
func TestOwnProcess(t *testing.T) {
	// Reading /proc again and again spends at least one clock tick.
	cpu := ProcessesCPU(os.Getpid())
	for i := 0; cpu == 0 && i < 1e6; i++ {
		cpu = ProcessesCPU(os.Getpid())
	}
	if cpu == 0 {
		t.Error("no CPU time read for this process")
	}
	if rss := ProcessRSS(os.Getpid()); rss <= 0 {
		t.Errorf("ProcessRSS = %v MiB", rss)
	}
	if ProcessesCPU(-1) != 0 || ProcessRSS(-1) != 0 {
		t.Error("a process that does not exist counts")
	}
}
