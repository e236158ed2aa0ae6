package restart

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// concurrency is --concurrent of the controllers, as in bench/fanout.
const concurrency = 10

func TestMain(m *testing.M) { benchenv.Main(m, nil, concurrency) }

// BenchmarkRestartOverConvergedFleet converges N Kustomizations, restarts
// the kustomize controller and measures its first pass.
func BenchmarkRestartOverConvergedFleet(b *testing.B) {
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_KUSTOMIZATIONS", []int{1000}) {
		b.Run(fmt.Sprintf("kustomizations=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start(ctx, b, env, "source")
			for b.Loop() {
				converge(ctx, b, env, n)
			}
		})
	}
}

// start runs one controller until ctx ends and returns a channel closed
// when it has stopped.
func start(ctx context.Context, b *testing.B, env *testenv.Env, controller string) <-chan struct{} {
	b.Helper()
	done, err := benchenv.Run(ctx, env.Config, func(o *app.Options) {
		o.Controllers = []string{controller}
		o.Concurrent = concurrency
	})
	if err != nil {
		b.Fatal(err)
	}
	return done
}

// converge makes n Kustomizations Ready under a first kustomize
// controller, stops it, then measures a second one's first pass.
func converge(ctx context.Context, b *testing.B, env *testenv.Env, n int) {
	b.Helper()
	ns := env.Namespace(b)
	// The controllers' namespace, where the kustomize controller keeps its
	// apply memo over the restart.
	b.Setenv("RUNTIME_NAMESPACE", ns)
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "fleet.git")
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: benchenv.FleetApp})
	benchenv.CreateRepository(b, env, ns, srv.HTTPURL("fleet.git"))
	first, stop := context.WithCancel(ctx)
	stopped := start(first, b, env, "kustomize")
	for i := range n {
		benchenv.CreateFleetKustomization(b, env, ns, benchenv.FleetName(i))
	}
	benchenv.WaitFleetReady(b, env, ns, n)
	stop()
	<-stopped

	rev0, requests0, reconciles0 := etcdRevision(b, env), benchenv.RequestCounts(), benchenv.Reconciles(b, "kustomization")
	var perSecond []int64
	m := benchenv.MeasurePhase(b, "first-pass", func() {
		start(ctx, b, env, "kustomize")
		begin := time.Now()
		sampled := make(chan []int64)
		go func() { sampled <- firstMinute(begin) }()
		// Reading the counter costs no request: look often.
		for benchenv.Reconciles(b, "kustomization")-reconciles0 < float64(n) {
			if time.Since(begin) > 30*time.Minute {
				b.Fatalf("%.0f of %d reconciled after 30m", benchenv.Reconciles(b, "kustomization")-reconciles0, n)
			}
			time.Sleep(100 * time.Millisecond)
		}
		b.ReportMetric(time.Since(begin).Seconds(), "s/first-pass")
		perSecond = <-sampled
	})
	writes := writesSince(requests0)
	all := since(requests0)
	b.ReportMetric(float64(total(all))/float64(n), "req/ks")
	b.Logf("requests of the first pass by method and resource:\n%s", describe(all))
	b.ReportMetric(float64(total(writes)), "writes")
	b.ReportMetric(float64(etcdRevision(b, env)-rev0), "etcd-revisions")
	b.ReportMetric(float64(slices.Max(perSecond)), "max-req/s")
	b.ReportMetric(float64(sum(perSecond))/float64(len(perSecond)), "mean-req/s-first-min")
	b.ReportMetric(m.CPU.Seconds(), "cpu-s")
	b.ReportMetric(m.PeakRSS, "MiB-peak-rss")
	b.Logf("writes of the first pass by method and resource:\n%s", describe(writes))
	b.Logf("requests per second in the first minute: %v", perSecond)
}

// firstMinute samples the requests sent each second until a minute after
// begin, and returns them.
func firstMinute(begin time.Time) []int64 {
	var out []int64
	last := benchenv.Requests()
	for next := begin.Add(time.Second); !next.After(begin.Add(time.Minute)); next = next.Add(time.Second) {
		time.Sleep(time.Until(next))
		now := benchenv.Requests()
		out = append(out, now-last)
		last = now
	}
	return out
}

// etcdRevision is the resourceVersion of a fresh List.
func etcdRevision(b *testing.B, env *testenv.Env) int64 {
	b.Helper()
	var list corev1.NamespaceList
	if err := env.Client.List(context.Background(), &list, client.Limit(1)); err != nil {
		b.Fatal(err)
	}
	rv, err := strconv.ParseInt(list.ResourceVersion, 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return rv
}

// writesSince returns the write requests (every method but GET and WATCH,
// dry-runs left out) sent since before, by method and resource.
func writesSince(before map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range benchenv.RequestCounts() {
		method, _, _ := strings.Cut(k, " ")
		if d := v - before[k]; d > 0 && method != "GET" && method != "WATCH" && !strings.Contains(k, benchenv.DryRun) {
			out[k] = d
		}
	}
	return out
}

// since returns every request sent since before, by method and resource.
func since(before map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range benchenv.RequestCounts() {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func describe(counts map[string]int64) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&sb, "%s %d\n", k, counts[k])
	}
	if sb.Len() == 0 {
		return "none\n"
	}
	return sb.String()
}

func total(counts map[string]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}

func sum(values []int64) int64 {
	var n int64
	for _, v := range values {
		n += v
	}
	return n
}
