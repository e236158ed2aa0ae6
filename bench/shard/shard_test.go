package shard

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/shard"
)

// concurrency is --concurrent of each replica's controllers, as in
// bench/fanout, and the floor's.
const concurrency = 10

func TestMain(m *testing.M) { benchenv.Main(m, nil, concurrency) }

// app is what every Kustomization applies, under a name prefix of its
// own: one ConfigMap.
var app = map[string]string{
	"app/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [configmap.yaml]\n",
	"app/configmap.yaml":     benchenv.FleetApp["app/configmap.yaml"],
}

// result is what one run with a number of replicas cost.
type result struct {
	converge, whole time.Duration
	// Per replica, over the convergence: CPU, peak RSS (MiB) and requests.
	cpu      []time.Duration
	rss      []float64
	requests []float64
	// plane is the CPU of each control-plane process over the
	// convergence, bench that of this process (the Git server, the
	// client creating the fleet and watching it).
	plane map[string]time.Duration
	bench time.Duration
}

func (r result) weirCPU() time.Duration {
	var sum time.Duration
	for _, c := range r.cpu {
		sum += c
	}
	return sum
}

func (r result) requestRate() float64 {
	var sum float64
	for _, n := range r.requests {
		sum += n
	}
	return sum / r.converge.Seconds()
}

// BenchmarkAutoSharding converges N Kustomizations under 1, then 2
// replicas in auto mode (a fresh namespace and fleet each), kills one
// and waits until the fleet is whole again.
func BenchmarkAutoSharding(b *testing.B) {
	bin := buildController(b)
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_KUSTOMIZATIONS", []int{1000}) {
		b.Run(fmt.Sprintf("kustomizations=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			floor := floorOf(b, env, n)
			var base *result
			for _, r := range benchenv.Counts(b, "WEIR_BENCH_REPLICAS", []int{1, 2}) {
				b.Run(fmt.Sprintf("replicas=%d", r), func(b *testing.B) {
					for b.Loop() {
						res := run(b, env, bin, n, r)
						if base == nil {
							base = &res
						}
						report(b, res, *base, floor)
					}
				})
			}
		})
	}
}

// run starts r replicas, waits until they agree on the membership, then
// measures the convergence of n Kustomizations and the recovery from a
// replica killed with SIGKILL.
func run(b *testing.B, env *testenv.Env, bin string, n, r int) result {
	b.Helper()
	ns := env.Namespace(b)
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "fleet.git")
	// A revision of each run's own: a fetch of one run's artifact is
	// never taken for another's.
	files := maps.Clone(app)
	files["run.txt"] = ns
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: files})
	replicas := make([]*replica, r)
	for i := range replicas {
		replicas[i] = startReplica(b, env, bin, ns)
	}
	waitMembers(b, env, ns, r)
	progress(b, "%d replicas agree on the membership; creating %d Kustomizations", r, n)

	plane := env.ControlPlane.PIDs()
	plane0 := cpuOf(b, plane)
	cpu0, req0 := make([]time.Duration, r), make([]float64, r)
	for i, p := range replicas {
		cpu0[i], req0[i] = processCPU(b, p.pid()), p.requests(b)
	}
	bench0 := benchenv.CPUTime()
	start := time.Now()
	benchenv.CreateRepository(b, env, ns, srv.HTTPURL("fleet.git"))
	for i := range n {
		benchenv.CreateFleetKustomization(b, env, ns, benchenv.FleetName(i))
	}
	benchenv.WaitFleetReady(b, env, ns, n)
	res := result{converge: time.Since(start), bench: benchenv.CPUTime() - bench0, plane: map[string]time.Duration{}}
	for name, c := range cpuOf(b, plane) {
		res.plane[name] = c - plane0[name]
	}
	for i, p := range replicas {
		res.cpu = append(res.cpu, processCPU(b, p.pid())-cpu0[i])
		res.rss = append(res.rss, benchenv.PeakRSSOf(p.pid()))
		res.requests = append(res.requests, p.requests(b)-req0[i])
	}

	progress(b, "converged in %.1fs; killing replica #0 (PID %d)", res.converge.Seconds(), replicas[0].pid())
	killed := time.Now()
	replicas[0].kill()
	if r == 1 {
		startReplica(b, env, bin, ns) // the ReplicaSet's replacement
	}
	requested := killed.Format(time.RFC3339Nano)
	requestAll(b, env, ns, requested)
	progress(b, "requested a reconcile of every Kustomization")
	benchenv.WaitFleet(b, env, ns, n, func(k *kustomizev1.Kustomization) bool {
		return k.Status.LastHandledReconcileAt == requested
	})
	res.whole = time.Since(killed)
	deleteFleet(b, env, ns)
	return res
}

// deleteFleet deletes the Kustomizations of ns and waits until they are
// gone, while the replicas that remove their finalizers still run: the
// next run's replicas watch every namespace and would otherwise spend
// their time on this run's leftovers.
func deleteFleet(b *testing.B, env *testenv.Env, ns string) {
	b.Helper()
	ctx := context.Background()
	if err := env.Client.DeleteAllOf(ctx, &kustomizev1.Kustomization{}, client.InNamespace(ns)); err != nil {
		b.Fatalf("deleting the fleet: %v", err)
	}
	benchenv.Poll(b, 10*time.Minute, func(ctx context.Context) (bool, string) {
		var list kustomizev1.KustomizationList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprintf("%d Kustomizations left", len(list.Items))
	})
}

// progress tells on standard error how far a run got: a run at 1,000
// and more lasts minutes, and the benchmark's own logs come at its end.
func progress(b *testing.B, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s: %s\n", time.Now().UTC().Format(time.TimeOnly), b.Name(), fmt.Sprintf(format, args...))
}

// report reports res, with its ratios to the floor and to base (the
// first replica count's run).
func report(b *testing.B, res, base result, floor time.Duration) {
	b.Helper()
	b.ReportMetric(res.converge.Seconds(), "s/converge")
	b.ReportMetric(floor.Seconds(), "s/floor")
	b.ReportMetric(res.converge.Seconds()/floor.Seconds(), "x-floor")
	b.ReportMetric(res.converge.Seconds()/base.converge.Seconds(), "x-base-converge")
	b.ReportMetric(res.whole.Seconds(), "s/whole-after-kill")
	b.ReportMetric(res.weirCPU().Seconds(), "weir-cpu-s")
	b.ReportMetric(res.weirCPU().Seconds()/base.weirCPU().Seconds(), "x-base-weir-cpu")
	b.ReportMetric(slices.Max(res.cpu).Seconds(), "max-replica-cpu-s")
	b.ReportMetric(slices.Max(res.rss), "MiB-max-replica-peak-rss")
	b.ReportMetric(res.requestRate(), "api-req/s")
	b.ReportMetric(res.plane["kube-apiserver"].Seconds(), "apiserver-cpu-s")
	b.ReportMetric(res.plane["etcd"].Seconds(), "etcd-cpu-s")
	var replicas []string
	for i := range res.cpu {
		replicas = append(replicas, fmt.Sprintf("#%d %.1f CPU-s %.0f MiB peak %.0f requests",
			i, res.cpu[i].Seconds(), res.rss[i], res.requests[i]))
	}
	var plane []string
	for _, name := range slices.Sorted(maps.Keys(res.plane)) {
		plane = append(plane, fmt.Sprintf("%s %.1f", name, res.plane[name].Seconds()))
	}
	b.Logf("load average %s; replicas: %s; control plane CPU-s: %s; benchmark process %.1f CPU-s",
		benchenv.LoadAverage(), strings.Join(replicas, "; "), strings.Join(plane, ", "), res.bench.Seconds())
}

// waitMembers waits until r member Leases in ns are held and all carry
// the same drained view: the replicas agree on the membership.
func waitMembers(b *testing.B, env *testenv.Env, ns string, r int) {
	b.Helper()
	benchenv.Poll(b, 2*time.Minute, func(ctx context.Context) (bool, string) {
		var leases coordinationv1.LeaseList
		if err := env.Client.List(ctx, &leases, client.InNamespace(ns), client.HasLabels{shard.GroupLabel}); err != nil {
			return false, err.Error()
		}
		views := map[string]bool{}
		for _, l := range leases.Items {
			if l.Spec.HolderIdentity != nil {
				views[l.Annotations[shard.DrainedAnnotation]] = true
			}
		}
		return len(leases.Items) == r && len(views) == 1 && !views[""],
			fmt.Sprintf("%d member Leases, drained views %v", len(leases.Items), slices.Collect(maps.Keys(views)))
	})
}

// requestAll asks every Kustomization in ns to reconcile, as `flux
// reconcile` does, ten at a time.
func requestAll(b *testing.B, env *testenv.Env, ns, requested string) {
	b.Helper()
	ctx := context.Background()
	var list kustomizev1.KustomizationList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, meta.ReconcileRequestAnnotation, requested)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i := range list.Items {
		k := &list.Items[i]
		g.Go(func() error { return env.Client.Patch(gctx, k, client.RawPatch("application/merge-patch+json", patch)) })
	}
	if err := g.Wait(); err != nil {
		b.Fatalf("requesting reconciles: %v", err)
	}
}

// cpuOf is the CPU time of each process of pids.
func cpuOf(b *testing.B, pids map[string]int) map[string]time.Duration {
	b.Helper()
	out := map[string]time.Duration{}
	for name, pid := range pids {
		out[name] = processCPU(b, pid)
	}
	return out
}

// floorOf measures benchenv.Floor for the objects n Kustomizations apply:
// one ConfigMap under each Kustomization's name prefix.
func floorOf(b *testing.B, env *testenv.Env, n int) time.Duration {
	b.Helper()
	ns := env.Namespace(b)
	objs := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(app["app/configmap.yaml"]), &u.Object); err != nil {
			b.Fatal(err)
		}
		u.SetNamespace(ns)
		u.SetName(benchenv.FleetName(i) + "-" + u.GetName())
		objs = append(objs, u)
	}
	return benchenv.Floor(b, env, ns, objs, 0, concurrency)
}
