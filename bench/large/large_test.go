package large

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// concurrency is --concurrent, as issue 16 measured; --concurrent-ssa
// stays at its default, which is also the floor's concurrency.
const (
	concurrency    = 10
	ssaConcurrency = 4
)

// controllers are weir's controllers the benchmarks start.
var controllers = []string{"source", "kustomize"}

// The benchmarks start weir's controllers themselves: the side-by-side one
// runs Flux's on the same control plane first, and two sets of controllers
// must not reconcile the same objects.
func TestMain(m *testing.M) { benchenv.Main(m, nil, concurrency) }

// shape makes the i-th object's manifest; value changes its data.
type shape func(i int, value string) string

var shapes = map[string]shape{
	"configmaps": func(i int, v string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\ndata:\n  value: %q\n", i, v)
	},
	// mixed cycles through five kinds of the core and RBAC groups.
	"mixed": func(i int, v string) string {
		switch i % 5 {
		case 0:
			return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o-%04d\ndata:\n  value: %q\n", i, v)
		case 1:
			return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: o-%04d\nstringData:\n  token: %q\n", i, v)
		case 2:
			return fmt.Sprintf("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: o-%04d\n  annotations:\n    v: %q\n", i, v)
		case 3:
			return fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: o-%04d\n"+
				"  annotations:\n    v: %q\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n", i, v)
		default:
			return fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: o-%04d\n"+
				"  annotations:\n    v: %q\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: o-%04d\n"+
				"subjects:\n- kind: ServiceAccount\n  name: o-%04d\n", i, v, i-1, i-2)
		}
	},
}

// files is the repository: objects manifests under big/, the first with
// value changed.
func files(s shape, objects int, changed string) map[string]string {
	m := make(map[string]string, objects)
	for i := range objects {
		v := "1"
		if i == 0 {
			v = changed
		}
		m[fmt.Sprintf("big/o-%04d.yaml", i)] = s(i, v)
	}
	return m
}

// BenchmarkLargeKustomization reports, for each shape, the floor and the
// three phases of one Kustomization of WEIR_BENCH_OBJECTS objects.
func BenchmarkLargeKustomization(b *testing.B) {
	objects := benchenv.Counts(b, "WEIR_BENCH_OBJECTS", []int{1500})[0]
	for _, name := range []string{"configmaps", "mixed"} {
		b.Run(fmt.Sprintf("%s=%d", name, objects), func(b *testing.B) {
			env := testenv.Get(b)
			benchenv.StartWeir(b, env, controllers, concurrency)
			for b.Loop() {
				cold, reapply := floor(b, env, shapes[name], objects)
				report(b, "floor-cold", cold, nil)
				report(b, "floor-reapply", reapply, nil)
				w, _ := phases(b, env, name, shapes[name], objects, weirMeasure(b, env))
				reportPhases(b, "", w, cold, reapply)
			}
		})
	}
}

// BenchmarkLargeKustomizationBesideFlux runs the ConfigMaps shape's three
// phases under Flux's own source-controller and kustomize-controller
// (child processes, from $WEIR_BENCH_FLUX_BIN_DIR, at the same
// --concurrent), then under weir's, on the same control plane, each in a
// namespace of its own that is deleted before the next starts; it reports
// both and weir ÷ Flux. Without WEIR_BENCH_FLUX_BIN_DIR it skips.
func BenchmarkLargeKustomizationBesideFlux(b *testing.B) {
	dir := benchenv.FluxBinDir(b, benchenv.FluxKustomize)
	objects := benchenv.Counts(b, "WEIR_BENCH_OBJECTS", []int{1500})[0]
	const name = "configmaps"
	b.Run(fmt.Sprintf("%s=%d", name, objects), func(b *testing.B) {
		env := testenv.Get(b)
		for b.Loop() {
			cold, reapply := floor(b, env, shapes[name], objects)
			report(b, "floor-cold", cold, nil)
			report(b, "floor-reapply", reapply, nil)
			flux := benchenv.StartFlux(b, env, dir, benchenv.FluxKustomize, concurrency)
			f, ns := phases(b, env, name, shapes[name], objects, func(_ string, step func()) benchenv.Phase {
				return flux.MeasurePhase(b, env, step)
			})
			benchenv.DeleteNamespace(b, env, ns, 10*time.Minute) // Flux finalizes its Kustomization
			flux.Stop()
			stop := benchenv.StartWeir(b, env, controllers, concurrency)
			w, ns := phases(b, env, name, shapes[name], objects, weirMeasure(b, env))
			benchenv.DeleteNamespace(b, env, ns, 10*time.Minute)
			stop()
			reportPhases(b, "", w, cold, reapply)
			reportPhases(b, "flux-", f, cold, reapply)
			for i, phase := range []string{"cold", "noop", "one-change"} {
				benchenv.ReportBesideFlux(b, phase+"-", w[i], f[i])
			}
		}
	})
}

// weirMeasure measures a phase of weir's controllers, which run in this
// process.
func weirMeasure(b *testing.B, env *testenv.Env) func(name string, step func()) benchenv.Phase {
	return func(name string, step func()) benchenv.Phase { return benchenv.MeasurePhaseOn(b, env, name, step) }
}

// reportPhases reports the cold, no-op and one-change phases, the first
// two beside their floors, each metric's name starting with prefix.
func reportPhases(b *testing.B, prefix string, p [3]benchenv.Phase, cold, reapply benchenv.Phase) {
	report(b, prefix+"cold", p[0], &cold)
	report(b, prefix+"noop", p[1], &reapply)
	report(b, prefix+"one-change", p[2], nil)
}

// phases creates a GitRepository of the shape's objects and one
// Kustomization of them in a new namespace, and measures with measure
// (given the phase's name) its cold apply, a no-op reconcile and a commit
// that changes one object; it returns the three and the namespace.
func phases(b *testing.B, env *testenv.Env, name string, s shape, objects int,
	measure func(name string, step func()) benchenv.Phase) ([3]benchenv.Phase, string) {
	b.Helper()
	var p [3]benchenv.Phase
	ns := env.Namespace(b)
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "fleet.git")
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: files(s, objects, "initial")})
	repo := benchenv.CreateRepository(b, env, ns, srv.HTTPURL("fleet.git"))
	rev := benchenv.WaitArtifact(b, env, repo, "")

	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      "./big", Prune: true, TargetNamespace: ns,
			Interval: metav1.Duration{Duration: time.Hour},
			Timeout:  &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	p[0] = measure(name+"-cold", func() {
		if err := env.Client.Create(context.Background(), k); err != nil {
			b.Fatal(err)
		}
		wait(b, env, k, func() bool { return k.Status.LastAppliedRevision == rev })
	})
	p[1] = measure(name+"-noop", func() {
		token := "noop"
		patch := client.MergeFrom(k.DeepCopy())
		k.Annotations = map[string]string{meta.ReconcileRequestAnnotation: token}
		if err := env.Client.Patch(context.Background(), k, patch); err != nil {
			b.Fatal(err)
		}
		wait(b, env, k, func() bool { return k.Status.LastHandledReconcileAt == token })
	})
	// The commit is the test Git server's work, not the controllers': the
	// phase starts when the GitRepository is asked to fetch it.
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: map[string]string{"big/o-0000.yaml": s(0, "changed")}})
	p[2] = measure(name+"-one-change", func() {
		requestReconcile(b, env, repo, "change")
		rev := benchenv.WaitArtifact(b, env, repo, rev)
		wait(b, env, k, func() bool { return k.Status.LastAppliedRevision == rev })
	})
	if msg := conditions.Get(k, meta.ReadyCondition).Message; !strings.HasPrefix(msg, "Applied revision") {
		b.Fatalf("large Kustomization not ready: %s", msg)
	}
	return p, ns
}

// report prints a phase's figures and, with a floor, its ratios to it. A
// phase of Flux's controllers (no Requests: they run in other processes)
// has no allocation or request figures.
func report(b *testing.B, phase string, p benchenv.Phase, floor *benchenv.Phase) {
	b.ReportMetric(p.Elapsed.Seconds(), phase+"-s")
	b.ReportMetric(p.CPU.Seconds(), phase+"-cpu-s")
	if p.Requests != nil {
		b.ReportMetric(float64(p.AllocBytes)/(1<<20), phase+"-alloc-MiB")
	}
	if floor != nil {
		b.ReportMetric(p.Elapsed.Seconds()/floor.Elapsed.Seconds(), phase+"-x-floor")
		b.ReportMetric(p.CPU.Seconds()/floor.CPU.Seconds(), phase+"-cpu-x-floor")
	} else if strings.HasPrefix(phase, "floor") {
		return
	}
	b.ReportMetric(p.PeakRSS, phase+"-MiB-peak-rss")
	if p.ControlPlaneCPU > 0 {
		b.ReportMetric(p.ControlPlaneCPU.Seconds(), phase+"-apiserver-etcd-cpu-s")
	}
	if p.Requests == nil {
		b.Logf("%s: %.2fs wall, %.2f CPU-s, peak RSS %.0f MiB, API server and etcd %.2f CPU-s, load %s",
			phase, p.Elapsed.Seconds(), p.CPU.Seconds(), p.PeakRSS, p.ControlPlaneCPU.Seconds(), benchenv.LoadAverage())
		return
	}
	b.ReportMetric(float64(p.RequestTotal()), phase+"-requests")
	b.Logf("%s: %.2fs wall, %.2f CPU-s, %.0f MiB allocated in %d allocations, peak RSS %.0f MiB, load %s; requests %s",
		phase, p.Elapsed.Seconds(), p.CPU.Seconds(), float64(p.AllocBytes)/(1<<20), p.Mallocs, p.PeakRSS, benchenv.LoadAverage(), p.Breakdown())
}

// floor applies the shape's objects directly into a namespace of its own:
// once into the empty namespace, once more unchanged.
func floor(b *testing.B, env *testenv.Env, s shape, objects int) (cold, reapply benchenv.Phase) {
	b.Helper()
	ns := env.Namespace(b)
	objs := make([]*unstructured.Unstructured, objects)
	for i := range objects {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(s(i, "initial")), &u.Object); err != nil {
			b.Fatal(err)
		}
		u.SetNamespace(ns)
		objs[i] = u
	}
	apply := func() {
		if err := benchenv.ApplyDirect(context.Background(), env.Client, objs, ssaConcurrency); err != nil {
			b.Fatalf("floor: %v", err)
		}
	}
	cold = benchenv.MeasurePhase(b, "floor-cold", apply)
	reapply = benchenv.MeasurePhase(b, "floor-reapply", apply)
	// The floor's objects are deleted before the Kustomization's phases:
	// deleting them meanwhile would load the API server the phases measure.
	benchenv.DeleteNamespace(b, env, ns, 5*time.Minute)
	return cold, reapply
}

func requestReconcile(b *testing.B, env *testenv.Env, obj client.Object, token string) {
	b.Helper()
	patch := client.RawPatch("application/merge-patch+json",
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, meta.ReconcileRequestAnnotation, token))
	if err := env.Client.Patch(context.Background(), obj, patch); err != nil {
		b.Fatal(err)
	}
}

// wait follows k through a watch of it alone until it is Ready and done
// says so. A watch, not a poll: each read of k decodes an inventory of
// every object (~150 KB at 1,500), which the API server would serve ten
// times a second during the phase measured.
func wait(b *testing.B, env *testenv.Env, k *kustomizev1.Kustomization, done func() bool) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	for {
		if err := wc.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
			b.Fatal(err)
		}
		if conditions.IsReady(k) && done() {
			return
		}
		finished := false
		err := benchenv.FollowKustomizations(ctx, wc, k.ResourceVersion, func(_ watch.EventType, got *kustomizev1.Kustomization) bool {
			got.DeepCopyInto(k)
			finished = conditions.IsReady(k) && done()
			return finished
		}, client.InNamespace(k.Namespace), client.MatchingFields{"metadata.name": k.Name})
		switch {
		case finished:
			return
		case ctx.Err() != nil:
			b.Fatalf("timed out waiting for %s: %s", k.Name, conditions.Get(k, meta.ReadyCondition).Message)
		case err != nil:
			b.Fatal(err)
		}
	}
}
