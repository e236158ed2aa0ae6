package idle

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

const concurrency = 10

func TestMain(m *testing.M) {
	if os.Getenv(benchenv.ProfileDirEnv) != "" {
		runtime.MemProfileRate = 4096 // per-Kustomization sites are a few hundred bytes
	}
	benchenv.Main(m, []string{"source", "kustomize"}, concurrency)
}

// minIdleWindow is the shortest time the fleet is watched at rest; the
// window lasts at least one whole interval (and its jitter), so that every
// Kustomization's periodic reconcile falls in it.
const minIdleWindow = 2 * time.Minute

// intervalEnv names the variable that sets the Kustomizations' interval
// (a Go duration, 10m by default): a shorter one puts the periodic
// reconciles of a small fleet, at the rate a large one runs them, in a
// short window.
const intervalEnv = "WEIR_BENCH_INTERVAL"

// fleetInterval is the Kustomizations' spec.interval.
func fleetInterval(b *testing.B) time.Duration {
	v := os.Getenv(intervalEnv)
	if v == "" {
		return 10 * time.Minute
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a positive duration", intervalEnv, v)
	}
	return d
}

// idleWindow is how long the fleet is watched at rest: one interval
// stretched by the controllers' jitter (a reconcile is due within
// interval·(1+jitter) of the last one), at least minIdleWindow.
func idleWindow(interval time.Duration) time.Duration {
	jitter := app.DefaultOptions().IntervalJitter
	return max(minIdleWindow, time.Duration(float64(interval)*(1+jitter/100)))
}

// BenchmarkIdleFleet creates WEIR_BENCH_KUSTOMIZATIONS Kustomizations
// (default 10,000), waits until all are Ready, and measures the fleet at
// rest.
func BenchmarkIdleFleet(b *testing.B) {
	n := benchenv.Counts(b, "WEIR_BENCH_KUSTOMIZATIONS", []int{10000})[0]
	b.Run(fmt.Sprintf("kustomizations=%d", n), func(b *testing.B) {
		for b.Loop() {
			run(b, n)
		}
	})
}

func run(b *testing.B, n int) {
	env := testenv.Get(b)
	interval := fleetInterval(b)
	baseRSS, baseHeap := settledMemory()
	baseClasses := memoryClasses()
	ns := env.Namespace(b)
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "fleet.git")
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: map[string]string{
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  greeting: hello\n",
	}})
	benchenv.CreateRepository(b, env, ns, srv.HTTPURL("fleet.git"))
	waitArtifact(b, env, ns)

	start, req0, cpu0 := time.Now(), benchenv.Requests(), benchenv.CPUTime()
	firstMinute := make(chan int64, 1)
	go func() {
		time.Sleep(time.Minute)
		firstMinute <- benchenv.Requests() - req0
	}()
	create(b, env, ns, n, interval)
	created := time.Since(start)
	waitReady(b, env, ns, n)
	converged, convergeCPU := time.Since(start), benchenv.CPUTime()-cpu0
	var minute int64
	if converged >= time.Minute {
		minute = <-firstMinute
	} else {
		minute = -1 // converged within the minute: see the totals
	}
	total := benchenv.Requests() - req0

	time.Sleep(30 * time.Second) // let the last status writes and events settle
	rss, heap := settledMemory()
	classes := memoryClasses()
	writeHeapProfile(b, n)
	window := idleWindow(interval)
	idle := watchIdle(b, n, window)

	b.ReportMetric(created.Seconds(), "s/created")
	b.ReportMetric(converged.Seconds(), "s/all-ready")
	b.ReportMetric(convergeCPU.Seconds(), "cpu-s/converge")
	b.ReportMetric(float64(minute)/60, "req/s-first-minute")
	b.ReportMetric(float64(total)/float64(n), "requests/ks-converge")
	b.ReportMetric((rss-baseRSS)*1024/float64(n), "KiB-rss/ks")
	b.ReportMetric((heap-baseHeap)*1024/float64(n), "KiB-heap/ks")
	b.ReportMetric(float64(classes[liveClass]-baseClasses[liveClass])/1024/float64(n), "KiB-live/ks")
	idle.report(b, window)
	b.Logf("empty: %.1f MiB RSS, %.1f MiB heap; at rest: %.1f MiB RSS, %.1f MiB heap; load %s",
		baseRSS, baseHeap, rss, heap, benchenv.LoadAverage())
	b.Logf("memory classes, KiB per Kustomization above the empty controllers:%s", classesPerKs(baseClasses, classes, n))
	b.Logf("API requests by method and resource since start:\n%s", benchenv.RequestBreakdown())
	b.Logf("idle window %s (interval %s): %.0f reconciles, requests: %s", window, interval, idle.reconciles,
		idle.requests.Breakdown())
}

// settledMemory returns the resident set and the heap in use, in MiB,
// after a collection that returns freed memory to the system.
func settledMemory() (rss, heap float64) {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return benchenv.CurrentRSS(), float64(ms.HeapInuse) / (1 << 20)
}

// liveClass is the runtime's measure of the heap objects themselves;
// the heap in use (settledMemory) adds the free slots of the spans that
// hold them, which a fleet built among a reconcile's garbage leaves many of.
const liveClass = "/memory/classes/heap/objects:bytes"

// memoryClasses reads the runtime's /memory/classes metrics (bytes), right
// after settledMemory's collection.
func memoryClasses() map[string]uint64 {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") && d.Kind == metrics.KindUint64 {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	out := make(map[string]uint64, len(samples))
	for _, s := range samples {
		out[s.Name] = s.Value.Uint64()
	}
	return out
}

// classesPerKs lists the classes that grew, in KiB per Kustomization.
func classesPerKs(before, after map[string]uint64, n int) string {
	var sb strings.Builder
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if d := float64(after[name]) - float64(before[name]); d != 0 {
			fmt.Fprintf(&sb, "\n  %s %.2f", strings.TrimPrefix(name, "/memory/classes/"), d/1024/float64(n))
		}
	}
	return sb.String()
}

func writeHeapProfile(b *testing.B, n int) {
	dir := os.Getenv(benchenv.ProfileDirEnv)
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("idle-%d.heap.pprof", n)))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// create creates n Kustomizations of ./app, each with a name prefix of
// its own, 16 at a time.
func create(b *testing.B, env *testenv.Env, ns string, n int, interval time.Duration) {
	b.Helper()
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			name := fmt.Sprintf("ks-%05d", i)
			return env.Client.Create(ctx, &kustomizev1.Kustomization{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: kustomizev1.KustomizationSpec{
					SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
					Path:      "./app", Prune: true, TargetNamespace: ns, NamePrefix: name + "-",
					Interval: metav1.Duration{Duration: interval},
				},
			})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

func waitArtifact(b *testing.B, env *testenv.Env, ns string) {
	b.Helper()
	testenv.Eventually(b, 5*time.Minute, func(ctx context.Context) (bool, string) {
		var repo sourcev1.GitRepository
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fleet"}, &repo); err != nil {
			return false, err.Error()
		}
		return repo.Status.Artifact != nil, "no artifact yet"
	})
}

// waitReady polls every 2 s until want Kustomizations in ns are Ready.
func waitReady(b *testing.B, env *testenv.Env, ns string, want int) {
	b.Helper()
	deadline := time.Now().Add(80 * time.Minute)
	for {
		var list kustomizev1.KustomizationList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		done := 0
		for i := range list.Items {
			if conditions.IsReady(&list.Items[i]) && list.Items[i].Status.LastAppliedRevision != "" {
				done++
			}
		}
		if done == want {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d Kustomizations ready", done, want)
		}
		time.Sleep(2 * time.Second)
	}
}
