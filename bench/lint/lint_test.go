package lint

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/cli/lintcmd"
	"github.com/weir-gitops/weir/internal/devenv/testenv/fleetgen"
)

// The size of the benchmark's repository.
const (
	kustomizations = 200
	objects        = 5000
)

// dirEnv names the directory a child process works on.
const dirEnv = "WEIR_BENCH_LINT_DIR"

func TestMain(m *testing.M) {
	benchenv.ChildMain(m, func(phase string) error { return runPhase(phase, os.Getenv(dirEnv)) })
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
	var lint, floor benchenv.Child
	b.ResetTimer()
	for range b.N {
		for _, p := range []struct {
			phase string
			dir   string
			total *benchenv.Child
		}{{"lint", repoDir, &lint}, {"floor", dir, &floor}} {
			u := benchenv.RunChild(b, p.phase, dirEnv+"="+p.dir)
			p.total.Wall += u.Wall
			p.total.CPU += u.CPU
			p.total.PeakRSS = max(p.total.PeakRSS, u.PeakRSS)
		}
	}
	b.StopTimer()
	n := float64(b.N)
	for _, m := range []struct {
		name string
		u    benchenv.Child
	}{{"lint", lint}, {"floor", floor}} {
		b.ReportMetric(m.u.Wall.Seconds()/n, m.name+"-wall-s")
		b.ReportMetric(m.u.CPU.Seconds()/n, m.name+"-cpu-s")
		b.ReportMetric(m.u.PeakRSS, m.name+"-peak-MiB")
	}
	b.ReportMetric(float64(repo.Objects), "objects")
}
