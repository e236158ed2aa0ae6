package fanout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// concurrency is --concurrent of both controllers, as issue 16 measured
// weir and Flux.
const concurrency = 10

// controllers are weir's controllers the benchmarks start.
var controllers = []string{"source", "kustomize"}

// The benchmarks start weir's controllers themselves: the side-by-side one
// runs Flux's on the same control plane first, and two sets of controllers
// must not reconcile the same objects.
func TestMain(m *testing.M) { benchenv.Main(m, nil, concurrency) }

// BenchmarkHealthFanOut creates N Kustomizations with wait: true and
// reports the time until all are Ready, the floor, their ratio, the CPU
// seconds, the peak RSS and heap of the benchmark process (both
// controllers). With WEIR_BENCH_PROFILE set to a directory it writes the
// CPU profile of the fleet phase there (fleet.cpu.pprof): `go tool pprof
// -tagfocus weir=controllers` is the controllers' share, -tagignore the
// harness's.
func BenchmarkHealthFanOut(b *testing.B) {
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_KUSTOMIZATIONS", []int{200, 1000}) {
		b.Run(fmt.Sprintf("kustomizations=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			benchenv.StartWeir(b, env, controllers, concurrency)
			for b.Loop() {
				floor := floorOf(b, env, n)
				m, _ := fleet(b, env, n, func(step func()) benchenv.Phase {
					return benchenv.MeasurePhaseOn(b, env, "fleet", step)
				})
				benchenv.ReportWeir(b, m, floor, n, "ks")
			}
		})
	}
}

// BenchmarkHealthFanOutBesideFlux runs the same fleet under Flux's own
// source-controller and kustomize-controller (child processes, from
// $WEIR_BENCH_FLUX_BIN_DIR, at the same --concurrent) and then under
// weir's, on the same control plane, each in a namespace of its own that
// is deleted before the next starts; it reports both and weir ÷ Flux.
// Without WEIR_BENCH_FLUX_BIN_DIR it skips.
func BenchmarkHealthFanOutBesideFlux(b *testing.B) {
	dir := benchenv.FluxBinDir(b, benchenv.FluxKustomize)
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_KUSTOMIZATIONS", []int{200, 1000}) {
		b.Run(fmt.Sprintf("kustomizations=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			for b.Loop() {
				floor := floorOf(b, env, n)
				flux := benchenv.StartFlux(b, env, dir, benchenv.FluxKustomize, concurrency)
				fm, ns := fleet(b, env, n, func(step func()) benchenv.Phase { return flux.MeasurePhase(b, env, step) })
				benchenv.DeleteNamespace(b, env, ns, 30*time.Minute) // Flux finalizes its Kustomizations
				flux.Stop()
				stop := benchenv.StartWeir(b, env, controllers, concurrency)
				m, ns := fleet(b, env, n, func(step func()) benchenv.Phase {
					return benchenv.MeasurePhaseOn(b, env, "fleet", step)
				})
				benchenv.DeleteNamespace(b, env, ns, 30*time.Minute)
				stop()
				benchenv.ReportWeir(b, m, floor, n, "ks")
				benchenv.ReportFlux(b, fm, floor)
				benchenv.ReportBesideFlux(b, "", m, fm)
			}
		})
	}
}

// fleet creates a GitRepository and n Kustomizations of FleetApp in a new
// namespace and measures, with measure, the time from their creation until
// all are Ready; it
// returns the phase and the namespace.
func fleet(b *testing.B, env *testenv.Env, n int, measure func(step func()) benchenv.Phase) (benchenv.Phase, string) {
	b.Helper()
	ns := env.Namespace(b)
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "fleet.git")
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: benchenv.FleetApp})
	// The fleet starts from a fetched source, so that the phase does not
	// measure whether a controller saw the artifact before or after the
	// Kustomizations.
	benchenv.WaitArtifact(b, env, benchenv.CreateRepository(b, env, ns, srv.HTTPURL("fleet.git")), "")
	m := measure(func() {
		for i := range n {
			benchenv.CreateFleetKustomization(b, env, ns, benchenv.FleetName(i))
		}
		benchenv.WaitFleetReady(b, env, ns, n)
	})
	return m, ns
}

// floorOf measures benchenv.Floor for the objects n Kustomizations apply:
// the four objects of app/ under each Kustomization's name prefix.
func floorOf(b *testing.B, env *testenv.Env, n int) time.Duration {
	b.Helper()
	ns := env.Namespace(b)
	var objs []*unstructured.Unstructured
	for i := range n {
		for _, file := range []string{"configmap.yaml", "secret.yaml", "serviceaccount.yaml", "deployment.yaml"} {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(benchenv.FleetApp["app/"+file]), &u.Object); err != nil {
				b.Fatal(err)
			}
			u.SetNamespace(ns)
			u.SetName(benchenv.FleetName(i) + "-" + u.GetName())
			if u.GetKind() == "Deployment" {
				spec := u.Object["spec"].(map[string]any)
				pod := spec["template"].(map[string]any)["spec"].(map[string]any)
				pod["serviceAccountName"] = benchenv.FleetName(i) + "-app"
			}
			objs = append(objs, u)
		}
	}
	return benchenv.Floor(b, env, ns, objs, n, concurrency)
}
