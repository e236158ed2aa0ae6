package lint

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/weir-gitops/weir/internal/cli/lintcmd"
	"github.com/weir-gitops/weir/internal/testenv/fleetgen"
)

// The size of the benchmark's repository.
const (
	kustomizations = 200
	objects        = 5000
)

// phaseEnv names the phase a child process runs, and dirEnv its repository.
const (
	phaseEnv = "WEIR_BENCH_LINT_PHASE"
	dirEnv   = "WEIR_BENCH_LINT_DIR"
)

func TestMain(m *testing.M) {
	if phase := os.Getenv(phaseEnv); phase != "" {
		if err := runPhase(phase, os.Getenv(dirEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runPhase is the child: weir lint, or the floor.
func runPhase(phase, dir string) error {
	switch phase {
	case "lint":
		streams := genericiooptions.IOStreams{In: os.Stdin, Out: io.Discard, ErrOut: os.Stderr}
		return lintcmd.Run(context.Background(), streams, dir, &lintcmd.Options{})
	case "floor":
		paths, err := os.ReadFile(filepath.Join(dir, "paths"))
		if err != nil {
			return err
		}
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		fs := filesys.MakeFsOnDisk()
		for _, p := range splitLines(string(paths)) {
			if _, err := k.Run(fs, filepath.Join(dir, "repo", p)); err != nil {
				return fmt.Errorf("kustomize build %s: %w", p, err)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown phase %q", phase)
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// usage is what a child process cost.
type usage struct {
	wall, cpu time.Duration
	peakRSS   int64 // bytes
}

// child runs a phase in a child process and returns its wall time, CPU
// time (user and system: the figure that does not depend on what else
// the machine runs) and peak RSS.
func child(b *testing.B, phase, dir, repo string) usage {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), phaseEnv+"="+phase, dirEnv+"="+dir)
	if phase == "lint" {
		cmd.Env = append(os.Environ(), phaseEnv+"="+phase, dirEnv+"="+repo)
	}
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v", phase, err)
	}
	wall := time.Since(start)
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return usage{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		peakRSS: ru.Maxrss * 1024} // Linux reports kilobytes
}

// BenchmarkLint reports weir lint's wall time and peak RSS on the
// repository, and the floor's, per iteration.
func BenchmarkLint(b *testing.B) {
	dir := b.TempDir()
	repoDir := filepath.Join(dir, "repo")
	repo, err := fleetgen.Write(repoDir, kustomizations, objects)
	if err != nil {
		b.Fatal(err)
	}
	var paths string
	for _, p := range repo.Paths {
		paths += p + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "paths"), []byte(paths), 0o644); err != nil {
		b.Fatal(err)
	}
	var lint, floor usage
	b.ResetTimer()
	for range b.N {
		for _, p := range []struct {
			phase string
			total *usage
		}{{"lint", &lint}, {"floor", &floor}} {
			u := child(b, p.phase, dir, repoDir)
			p.total.wall += u.wall
			p.total.cpu += u.cpu
			p.total.peakRSS = max(p.total.peakRSS, u.peakRSS)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	for _, m := range []struct {
		name string
		u    usage
	}{{"lint", lint}, {"floor", floor}} {
		b.ReportMetric(m.u.wall.Seconds()/n, m.name+"-wall-s")
		b.ReportMetric(m.u.cpu.Seconds()/n, m.name+"-cpu-s")
		b.ReportMetric(float64(m.u.peakRSS)/(1<<20), m.name+"-peak-MiB")
	}
	b.ReportMetric(float64(repo.Objects), "objects")
}
