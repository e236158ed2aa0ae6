package large

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

func TestMain(m *testing.M) { benchenv.Main(m, []string{"source", "kustomize"}, concurrency) }

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
			for b.Loop() {
				run(b, name, shapes[name], objects)
			}
		})
	}
}

func run(b *testing.B, name string, s shape, objects int) {
	env := testenv.Get(b)
	cold, reapply := floor(b, env, s, objects)
	report(b, "floor-cold", cold, nil)
	report(b, "floor-reapply", reapply, nil)

	ns := env.Namespace(b)
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "fleet.git")
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: files(s, objects, "initial")})
	repo := benchenv.CreateRepository(b, env, ns, srv.HTTPURL("fleet.git"))
	rev := waitArtifact(b, env, repo, "")

	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      "./big", Prune: true, TargetNamespace: ns,
			Interval: metav1.Duration{Duration: time.Hour},
			Timeout:  &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	p := benchenv.MeasurePhase(b, name+"-cold", func() {
		if err := env.Client.Create(context.Background(), k); err != nil {
			b.Fatal(err)
		}
		wait(b, env, k, func() bool { return k.Status.LastAppliedRevision == rev })
	})
	report(b, "cold", p, &cold)
	p = benchenv.MeasurePhase(b, name+"-noop", func() {
		token := "noop"
		patch := client.MergeFrom(k.DeepCopy())
		k.Annotations = map[string]string{meta.ReconcileRequestAnnotation: token}
		if err := env.Client.Patch(context.Background(), k, patch); err != nil {
			b.Fatal(err)
		}
		wait(b, env, k, func() bool { return k.Status.LastHandledReconcileAt == token })
	})
	report(b, "noop", p, &reapply)
	// The commit is the test Git server's work, not the controllers': the
	// phase starts when the GitRepository is asked to fetch it.
	srv.Commit(b, "fleet.git", gitserver.Commit{Files: map[string]string{"big/o-0000.yaml": s(0, "changed")}})
	p = benchenv.MeasurePhase(b, name+"-one-change", func() {
		requestReconcile(b, env, repo, "change")
		rev := waitArtifact(b, env, repo, rev)
		wait(b, env, k, func() bool { return k.Status.LastAppliedRevision == rev })
	})
	report(b, "one-change", p, nil)
	if msg := conditions.Get(k, meta.ReadyCondition).Message; !strings.HasPrefix(msg, "Applied revision") {
		b.Fatalf("large Kustomization not ready: %s", msg)
	}
}

// report prints a phase's figures and, with a floor, its ratios to it.
func report(b *testing.B, phase string, p benchenv.Phase, floor *benchenv.Phase) {
	b.ReportMetric(p.Elapsed.Seconds(), phase+"-s")
	b.ReportMetric(p.CPU.Seconds(), phase+"-cpu-s")
	b.ReportMetric(float64(p.AllocBytes)/(1<<20), phase+"-alloc-MiB")
	if floor != nil {
		b.ReportMetric(p.Elapsed.Seconds()/floor.Elapsed.Seconds(), phase+"-x-floor")
		b.ReportMetric(p.CPU.Seconds()/floor.CPU.Seconds(), phase+"-cpu-x-floor")
	} else if strings.HasPrefix(phase, "floor") {
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
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := env.Client.Delete(context.Background(), namespace); err != nil {
		b.Fatalf("deleting the floor: %v", err)
	}
	testenv.Eventually(b, 5*time.Minute, func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(namespace), namespace)
		return apierrors.IsNotFound(err), fmt.Sprintf("the floor's namespace is still there (%v)", err)
	})
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

// waitArtifact waits until repo has an artifact other than old and
// returns its revision.
func waitArtifact(b *testing.B, env *testenv.Env, repo *sourcev1.GitRepository, old string) string {
	b.Helper()
	rev := ""
	testenv.Eventually(b, 5*time.Minute, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
			return false, err.Error()
		}
		if a := repo.Status.Artifact; a != nil && a.Revision != old {
			rev = a.Revision
			return true, ""
		}
		return false, "no new artifact"
	})
	return rev
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
