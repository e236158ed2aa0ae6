package prdiff

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/diffcmd"
	"github.com/weir-gitops/weir/internal/devenv/testenv/fleetgen"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/fleet"
)

const (
	kustomizations = 200
	objects        = 5000
	// repoEnv names the repository a child process works on.
	repoEnv = "WEIR_BENCH_PRDIFF_REPO"
)

// TestMain runs one step and exits when this binary is a child.
func TestMain(m *testing.M) {
	benchenv.ChildMain(m, func(step string) error { return runStep(step, os.Getenv(repoEnv)) })
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

func measure(b *testing.B, step, repo string) benchenv.Child {
	b.Helper()
	return benchenv.RunChild(b, step, repoEnv+"="+repo)
}

// headBuilds reads "<head>: N builds, M reused" from the progress line.
var headBuilds = regexp.MustCompile(`: (\d+) builds, (\d+) reused`)

func BenchmarkDiffBase(b *testing.B) {
	repo := history(b)
	for b.Loop() {
		floor := measure(b, "floor", repo)
		one := measure(b, "v0..one", repo)
		all := measure(b, "one..all", repo)
		b.ReportMetric(floor.Wall.Seconds(), "s-floor-load")
		b.ReportMetric(floor.CPU.Seconds(), "s-cpu-floor-load")
		b.ReportMetric(one.CPU.Seconds(), "s-cpu-diff-one-app")
		b.ReportMetric(all.CPU.Seconds(), "s-cpu-diff-every-app")
		b.ReportMetric(floor.PeakRSS, "MiB-floor-rss")
		b.ReportMetric(one.Wall.Seconds(), "s-diff-one-app")
		b.ReportMetric(one.PeakRSS, "MiB-diff-one-app-rss")
		b.ReportMetric(all.Wall.Seconds(), "s-diff-every-app")
		b.ReportMetric(all.PeakRSS, "MiB-diff-every-app-rss")
		for _, r := range []struct {
			name string
			m    benchenv.Child
		}{{"one-app", one}, {"every-app", all}} {
			if s := headBuilds.FindStringSubmatch(r.m.Stderr); s != nil {
				n, _ := strconv.Atoi(s[1])
				b.ReportMetric(float64(n), "head-builds-"+r.name)
			}
		}
	}
}
