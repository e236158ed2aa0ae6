package prdiff

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/diffcmd"
	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/testenv/fleetgen"
	"github.com/weir-gitops/weir/internal/testenv/gitserver"
)

const (
	kustomizations = 200
	objects        = 5000
	// stepEnv names the step a child process runs; repoEnv its repository.
	stepEnv = "WEIR_BENCH_PRDIFF_STEP"
	repoEnv = "WEIR_BENCH_PRDIFF_REPO"
)

// TestMain runs one step and exits when this binary is a child.
func TestMain(m *testing.M) {
	if step := os.Getenv(stepEnv); step != "" {
		if err := runStep(step, os.Getenv(repoEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runStep is one measured step: "floor" loads the repository once, the
// others run `weir diff --base` over a range of the history.
func runStep(step, repo string) error {
	ctx := context.Background()
	if step == "floor" {
		_, err := fleet.Load(ctx, fleet.Options{Dir: repo})
		return err
	}
	base, head, _ := strings.Cut(step, "..")
	cmd := diffcmd.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: os.Stderr}, &clideps.Deps{})
	cmd.SetArgs([]string{"--base", base, "--head", head, repo})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(ctx)
	if err != nil && err.Error() != "" {
		return err
	}
	return nil // exit 1 (changes) is the expected outcome
}

// history writes the generated fleet and commits it (v0), then one
// application changed (one), then every application changed (all).
func history(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	gen, err := fleetgen.Write(dir, kustomizations, objects)
	if err != nil {
		b.Fatal(err)
	}
	gitserver.InitLocal(b, dir)
	gitserver.CommitLocal(b, dir, gitserver.Commit{Tag: "v0"}) // what Write wrote
	apps := gen.Paths[2:]                                      // the root's and infrastructure's first
	gitserver.CommitLocal(b, dir, gitserver.Commit{Tag: "one", Files: touch(b, dir, apps[len(apps)/2], "one")})
	all := map[string]string{}
	for _, app := range apps {
		for k, v := range touch(b, dir, app, "all") {
			all[k] = v
		}
	}
	gitserver.CommitLocal(b, dir, gitserver.Commit{Tag: "all", Files: all})
	return dir
}

// touch changes the first object file of an application: a label more,
// named after the commit.
func touch(b *testing.B, dir, app, label string) map[string]string {
	name := app + "/obj-000.yaml"
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		b.Fatal(err)
	}
	changed := strings.Replace(string(data), "metadata:\n", "metadata:\n  annotations:\n    touched-by: "+label+"\n", 1)
	if before, _, ok := strings.Cut(string(data), "    touched-by: "); ok { // touched before
		_, rest, _ := strings.Cut(string(data)[len(before):], "\n")
		changed = before + "    touched-by: " + label + "\n" + rest
	}
	if changed == string(data) {
		b.Fatalf("%s: no metadata to label", name)
	}
	return map[string]string{name: changed}
}

// measured is one child run.
type measured struct {
	wall   time.Duration
	cpu    time.Duration // user and system
	rssMiB float64
	stderr string
}

func measure(b *testing.B, step, repo string) measured {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), stepEnv+"="+step, repoEnv+"="+repo)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("step %s: %v\n%s", step, err, stderr.String())
	}
	m := measured{wall: time.Since(start), stderr: stderr.String()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.rssMiB = float64(ru.Maxrss) / 1024
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return m
}

// headBuilds reads "<head>: N builds, M reused" from the progress line.
var headBuilds = regexp.MustCompile(`: (\d+) builds, (\d+) reused`)

func BenchmarkDiffBase(b *testing.B) {
	repo := history(b)
	for b.Loop() {
		floor := measure(b, "floor", repo)
		one := measure(b, "v0..one", repo)
		all := measure(b, "one..all", repo)
		b.ReportMetric(floor.wall.Seconds(), "s-floor-load")
		b.ReportMetric(floor.cpu.Seconds(), "s-cpu-floor-load")
		b.ReportMetric(one.cpu.Seconds(), "s-cpu-diff-one-app")
		b.ReportMetric(all.cpu.Seconds(), "s-cpu-diff-every-app")
		b.ReportMetric(floor.rssMiB, "MiB-floor-rss")
		b.ReportMetric(one.wall.Seconds(), "s-diff-one-app")
		b.ReportMetric(one.rssMiB, "MiB-diff-one-app-rss")
		b.ReportMetric(all.wall.Seconds(), "s-diff-every-app")
		b.ReportMetric(all.rssMiB, "MiB-diff-every-app-rss")
		for _, r := range []struct {
			name string
			m    measured
		}{{"one-app", one}, {"every-app", all}} {
			if s := headBuilds.FindStringSubmatch(r.m.stderr); s != nil {
				n, _ := strconv.Atoi(s[1])
				b.ReportMetric(float64(n), "head-builds-"+r.name)
			}
		}
	}
}
