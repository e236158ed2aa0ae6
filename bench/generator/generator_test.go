package generator

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

func TestMain(m *testing.M) {
	benchenv.Main(m, []string{"source", "source-watcher"}, 10)
}

func BenchmarkPathPatternMonorepo(b *testing.B) {
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_APPS", []int{200}) {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			for b.Loop() {
				run(b, env, n)
			}
		})
	}
}

func run(b *testing.B, env *testenv.Env, n int) {
	ns := env.Namespace(b)
	srv := gitserver.New(b, gitserver.Options{})
	srv.InitRepo(b, "mono.git")
	files := map[string]string{}
	for i := range n {
		app := fmt.Sprintf("app-%04d", i)
		files["apps/"+app+"/kustomization.yaml"] = "resources: [cm.yaml]\n"
		files["apps/"+app+"/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + app + "\ndata:\n  v: \"1\"\n"
	}
	srv.Commit(b, "mono.git", gitserver.Commit{Files: files})

	var repo *sourcev1.GitRepository
	floor := benchenv.MeasurePhase(b, "floor", func() {
		repo = benchenv.CreateRepository(b, env, ns, srv.HTTPURL("mono.git"))
		waitFor(b, env, repo, func() bool { return conditions.IsReady(repo) && repo.Status.Artifact != nil })
	})

	ag := &sourceextensionsv1beta1.ArtifactGenerator{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: sourceextensionsv1beta1.ArtifactGeneratorSpec{
			Sources:     []sourceextensionsv1beta1.SourceReference{{Alias: "repo", Kind: sourcev1.GitRepositoryKind, Name: repo.Name}},
			PathPattern: "@repo/apps/{app}",
			OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{
				Name: "{app}", Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@repo/apps/{app}/**", To: "@artifact/"}},
			}},
		},
	}
	all := benchenv.MeasurePhase(b, "generate", func() {
		if err := env.Client.Create(context.Background(), ag); err != nil {
			b.Fatal(err)
		}
		waitFor(b, env, ag, func() bool { return conditions.IsReady(ag) && len(ag.Status.Inventory) == n })
	})
	before := versions(b, env, ns)

	one := benchenv.MeasurePhase(b, "one-app", func() {
		srv.Commit(b, "mono.git", gitserver.Commit{Files: map[string]string{"apps/app-0007/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-0007\ndata:\n  v: \"2\"\n"}})
		env.RequestReconcile(b, repo)
		old := ag.Status.ObservedSourcesDigest
		waitFor(b, env, ag, func() bool { return conditions.IsReady(ag) && ag.Status.ObservedSourcesDigest != old })
	})
	after := versions(b, env, ns)
	rewritten := 0
	for name, rv := range after {
		if before[name] != rv {
			rewritten++
		}
	}
	b.ReportMetric(floor.Elapsed.Seconds(), "s/floor-git-artifact")
	b.ReportMetric(all.Elapsed.Seconds(), "s/all-generated")
	b.ReportMetric(all.Elapsed.Seconds()/floor.Elapsed.Seconds(), "x-floor")
	b.ReportMetric(one.Elapsed.Seconds(), "s/one-app-commit")
	b.ReportMetric(one.Elapsed.Seconds()/floor.Elapsed.Seconds(), "x-floor-one-app")
	b.ReportMetric(float64(rewritten), "externalartifacts-rewritten")
	b.ReportMetric(all.CPU.Seconds(), "cpu-s-generate")
	b.ReportMetric(all.PeakRSS, "MiB-peak-rss")
	b.Logf("load average %s; API requests while generating: %s", benchenv.LoadAverage(), all.Breakdown())
}

// waitFor polls obj until done says so.
func waitFor(b *testing.B, env *testenv.Env, obj client.Object, done func() bool) {
	b.Helper()
	testenv.Eventually(b, 10*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		return done(), "not there yet"
	})
}

// versions is each ExternalArtifact's resourceVersion by name.
func versions(b *testing.B, env *testenv.Env, ns string) map[string]string {
	b.Helper()
	var list sourcev1.ExternalArtifactList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	out := map[string]string{}
	for _, ea := range list.Items {
		out[ea.Name] = ea.ResourceVersion
	}
	return out
}
