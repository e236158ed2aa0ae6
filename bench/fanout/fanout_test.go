package fanout

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/testenv"
	"github.com/weir-gitops/weir/internal/testenv/gitserver"
)

// concurrency is --concurrent of both controllers, as issue 16 measured
// weir and Flux.
const concurrency = 10

func TestMain(m *testing.M) { benchenv.Main(m, []string{"source", "kustomize"}, concurrency) }

// app is the four objects of each Kustomization; namePrefix makes them
// distinct.
var appFiles = map[string]string{
	"app/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
		"resources: [configmap.yaml, secret.yaml, serviceaccount.yaml, deployment.yaml]\n",
	"app/configmap.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  greeting: hello\n",
	"app/secret.yaml":         "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret\nstringData:\n  token: t0ken\n",
	"app/serviceaccount.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n",
	"app/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: bench}
spec:
  replicas: 1
  selector:
    matchLabels: {app: bench}
  template:
    metadata:
      labels: {app: bench}
    spec:
      serviceAccountName: app
      containers:
      - name: app
        image: registry.local/bench/app:1.0.0
`,
}

// BenchmarkHealthFanOut creates N Kustomizations with wait: true and
// reports the time until all are Ready, the floor, their ratio, the CPU
// seconds and the peak RSS of the benchmark process (both controllers).
func BenchmarkHealthFanOut(b *testing.B) {
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_KUSTOMIZATIONS", []int{200, 1000}) {
		b.Run(fmt.Sprintf("kustomizations=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			for b.Loop() {
				floor := floorOf(b, env, n)
				ns := env.Namespace(b)
				srv := gitserver.New(b, gitserver.Options{})
				srv.InitRepo(b, "fleet.git")
				srv.Commit(b, "fleet.git", gitserver.Commit{Files: appFiles})
				createRepository(b, env, ns, srv.HTTPURL("fleet.git"))
				before := benchenv.Requests()
				m := benchenv.Measure(func() {
					for i := range n {
						createKustomization(b, env, ns, name(i))
					}
					waitReady(b, env, ns, n)
				})
				b.ReportMetric(m.Elapsed.Seconds(), "s/all-ready")
				b.ReportMetric(floor.Seconds(), "s/floor")
				b.ReportMetric(m.Elapsed.Seconds()/floor.Seconds(), "x-floor")
				b.ReportMetric(m.CPU.Seconds(), "cpu-s")
				b.ReportMetric(m.RSSBefore, "MiB-rss-before")
				b.ReportMetric(m.PeakRSS, "MiB-peak-rss")
				b.ReportMetric(float64(benchenv.Requests()-before)/float64(n), "api-requests/ks")
				b.Logf("API requests by method and resource:\n%s", benchenv.RequestBreakdown())
			}
		})
	}
}

func name(i int) string { return fmt.Sprintf("ks-%04d", i) }

// floorOf measures benchenv.Floor for the objects n Kustomizations apply:
// the four objects of app/ under each Kustomization's name prefix.
func floorOf(b *testing.B, env *testenv.Env, n int) time.Duration {
	b.Helper()
	ns := env.Namespace(b)
	var objs []*unstructured.Unstructured
	for i := range n {
		for _, file := range []string{"configmap.yaml", "secret.yaml", "serviceaccount.yaml", "deployment.yaml"} {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(appFiles["app/"+file]), &u.Object); err != nil {
				b.Fatal(err)
			}
			u.SetNamespace(ns)
			u.SetName(name(i) + "-" + u.GetName())
			if u.GetKind() == "Deployment" {
				spec := u.Object["spec"].(map[string]any)
				pod := spec["template"].(map[string]any)["spec"].(map[string]any)
				pod["serviceAccountName"] = name(i) + "-app"
			}
			objs = append(objs, u)
		}
	}
	return benchenv.Floor(b, env, ns, objs, n, concurrency)
}

func createRepository(b *testing.B, env *testenv.Env, ns, url string) {
	b.Helper()
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet"},
		Spec: sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	if err := env.Client.Create(context.Background(), repo); err != nil {
		b.Fatal(err)
	}
}

// createKustomization creates a Kustomization as `flux create
// kustomization --wait` writes it, with a name prefix of its own.
func createKustomization(b *testing.B, env *testenv.Env, ns, name string) {
	b.Helper()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path:      "./app", Prune: true, Wait: true, TargetNamespace: ns, NamePrefix: name + "-",
			Interval: metav1.Duration{Duration: time.Hour},
			Timeout:  &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	if err := env.Client.Create(context.Background(), k); err != nil {
		b.Fatal(err)
	}
}

// waitReady polls until want Kustomizations in ns are Ready.
func waitReady(b *testing.B, env *testenv.Env, ns string, want int) {
	b.Helper()
	testenv.Eventually(b, 30*time.Minute, func(ctx context.Context) (bool, string) {
		var list kustomizev1.KustomizationList
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		done := 0
		for i := range list.Items {
			if conditions.IsReady(&list.Items[i]) && list.Items[i].Status.LastAppliedRevision != "" {
				done++
			}
		}
		return done == want, fmt.Sprintf("%d of %d Kustomizations ready", done, want)
	})
}
