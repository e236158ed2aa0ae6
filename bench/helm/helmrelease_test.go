package helm

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// concurrency is --concurrent for both controllers, as flux-benchmark
// runs source-controller and helm-controller.
const concurrency = 10

// controllers are weir's controllers the benchmarks start.
var controllers = []string{"source", "helm"}

// The benchmarks start weir's controllers themselves: the side-by-side one
// runs Flux's on the same control plane first, and two sets of controllers
// must not reconcile the same objects.
func TestMain(m *testing.M) { benchenv.Main(m, nil, concurrency) }

// The benchmark chart is flux-benchmark's shape: a Deployment, a Service
// and a ConfigMap. The Deployment has one replica, which the kwok node
// makes Available, so releases and the floor both wait for a rollout.
const (
	deploymentTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: app
        image: registry.local/bench/app:1.0.0
        ports: [{containerPort: 8080, name: http}]
`
	serviceTemplate = `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80, targetPort: http}]
`
	configMapTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
`
	valuesYAML = "replicas: 1\ngreeting: hello\n"
)

func benchChart() *chartv2.Chart {
	modTime := time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)
	file := func(name, data string) *common.File {
		return &common.File{Name: name, Data: []byte(data), ModTime: modTime}
	}
	return &chartv2.Chart{
		Metadata: &chartv2.Metadata{
			APIVersion: chartv2.APIVersionV2, Name: "bench-app", Version: "1.0.0", AppVersion: "1.0.0",
			Description: "weir's HelmRelease benchmark chart.", Type: "application",
		},
		ModTime: modTime,
		Raw:     []*common.File{file("values.yaml", valuesYAML)},
		Values:  map[string]any{"replicas": 1, "greeting": "hello"},
		Templates: []*common.File{
			file("templates/deployment.yaml", deploymentTemplate),
			file("templates/service.yaml", serviceTemplate),
			file("templates/configmap.yaml", configMapTemplate),
		},
	}
}

// BenchmarkHelmReleases installs N HelmReleases of the benchmark chart
// (spec.chart from one HelmRepository, so N HelmCharts too, as Flux users
// write them) and reports the time until all are Ready, the peak RSS and
// the CPU seconds of the benchmark process (both controllers; the control
// plane runs in other processes), and the floor: the same rendered
// manifests server-side applied directly, 10 at a time, and waited for
// until every Deployment is Available, in another namespace of the same
// control plane, measured first.
func BenchmarkHelmReleases(b *testing.B) {
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_RELEASES", []int{100, 500}) {
		b.Run(fmt.Sprintf("releases=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			benchenv.StartWeir(b, env, controllers, concurrency)
			srv := helmserver.New(b, helmserver.Options{})
			srv.AddChart(b, benchChart())
			for b.Loop() {
				floor := applyFloor(b, env, n)
				hrNS := env.Namespace(b)
				createRepository(b, env, hrNS, srv.URL())
				m := benchenv.Measure(func() {
					for i := range n {
						createRelease(b, env, hrNS, releaseName(i), nil)
					}
					waitReleases(b, env, hrNS, n, "")
				})
				b.ReportMetric(m.Elapsed.Seconds(), "s/all-ready")
				b.ReportMetric(floor.Seconds(), "s/floor")
				b.ReportMetric(m.Elapsed.Seconds()/floor.Seconds(), "x-floor")
				b.ReportMetric(m.RSSBefore, "MiB-rss-before")
				b.ReportMetric(m.PeakRSS, "MiB-peak-rss")
				b.ReportMetric(m.CPU.Seconds(), "cpu-s")
			}
		})
	}
}

// BenchmarkHelmReleasesBesideFlux runs the same releases under Flux's own
// source-controller and helm-controller (child processes, from
// $WEIR_BENCH_FLUX_BIN_DIR, at the same --concurrent) and then under
// weir's, on the same control plane, each in a namespace of its own that
// is deleted before the next starts; it reports both, the floor and weir ÷
// Flux. Each phase starts from a HelmRepository whose index is fetched and
// ends when every release is Ready, which both controllers report only
// after Helm's default wait: every Deployment Available. With
// WEIR_BENCH_PROFILE set it writes the CPU profile of weir's phase there
// (releases.cpu.pprof). With WEIR_BENCH_WEIR_BIN naming a weir-controller
// binary, weir's controllers also run as a child process after the
// in-process run and are measured as Flux's are (process-…). Without
// WEIR_BENCH_FLUX_BIN_DIR it skips.
func BenchmarkHelmReleasesBesideFlux(b *testing.B) {
	dir := benchenv.FluxBinDir(b, benchenv.FluxHelm)
	for _, n := range benchenv.Counts(b, "WEIR_BENCH_RELEASES", []int{100, 500}) {
		b.Run(fmt.Sprintf("releases=%d", n), func(b *testing.B) {
			env := testenv.Get(b)
			srv := helmserver.New(b, helmserver.Options{})
			srv.AddChart(b, benchChart())
			for b.Loop() {
				floor := applyFloor(b, env, n)
				flux := benchenv.StartFlux(b, env, dir, benchenv.FluxHelm, concurrency)
				fm, ns := releases(b, env, srv.URL(), n, func(step func()) benchenv.Phase {
					return flux.MeasurePhase(b, env, step)
				})
				benchenv.DeleteNamespace(b, env, ns, 30*time.Minute) // Flux uninstalls its releases
				flux.Stop()
				stop := benchenv.StartWeir(b, env, controllers, concurrency)
				m, ns := releases(b, env, srv.URL(), n, func(step func()) benchenv.Phase {
					return benchenv.MeasurePhaseOn(b, env, "releases", step)
				})
				benchenv.DeleteNamespace(b, env, ns, 30*time.Minute)
				stop()
				if bin := os.Getenv(benchenv.WeirBinEnv); bin != "" {
					weir := benchenv.StartWeirProcess(b, env, bin, controllers, concurrency)
					wp, ns := releases(b, env, srv.URL(), n, func(step func()) benchenv.Phase {
						return weir.MeasurePhase(b, env, step)
					})
					benchenv.DeleteNamespace(b, env, ns, 30*time.Minute)
					weir.Stop()
					b.ReportMetric(wp.Elapsed.Seconds(), "process-s/all-ready")
					b.ReportMetric(wp.CPU.Seconds(), "process-cpu-s")
					b.ReportMetric(wp.PeakRSS, "process-MiB-peak-rss")
					b.ReportMetric(wp.ControlPlaneCPU.Seconds(), "process-apiserver-etcd-cpu-s")
					b.Logf("weir-controller process: %.1f s, %.1f CPU-s, peak RSS %.0f MiB (%.0f before), API server and etcd %.1f CPU-s; load average %s",
						wp.Elapsed.Seconds(), wp.CPU.Seconds(), wp.PeakRSS, wp.RSSBefore, wp.ControlPlaneCPU.Seconds(), benchenv.LoadAverage())
					benchenv.ReportBesideFlux(b, "process-", wp, fm)
				}
				benchenv.ReportWeir(b, m, floor, n, "hr")
				benchenv.ReportFlux(b, fm, floor)
				benchenv.ReportBesideFlux(b, "", m, fm)
			}
		})
	}
}

// releases creates a HelmRepository in a new namespace, waits until its
// index is fetched, and measures, with measure, the time from the creation
// of n HelmReleases until all are Ready; it checks that every release's
// Deployment was Available by then (the releases waited) and returns the
// phase and the namespace.
func releases(b *testing.B, env *testenv.Env, url string, n int, measure func(step func()) benchenv.Phase) (benchenv.Phase, string) {
	b.Helper()
	ns := env.Namespace(b)
	createRepository(b, env, ns, url)
	waitRepository(b, env, ns)
	var available int
	m := measure(func() {
		for i := range n {
			createRelease(b, env, ns, releaseName(i), nil)
		}
		waitReleases(b, env, ns, n, "")
		var err error
		if available, err = benchenv.AvailableDeployments(context.Background(), env.Client, ns); err != nil {
			b.Fatal(err)
		}
	})
	if available != n {
		b.Fatalf("%d of %d releases Ready with %d Deployments Available: a release did not wait", n, n, available)
	}
	return m, ns
}

// waitRepository waits until the HelmRepository "bench" in ns is Ready:
// its index fetched, so that a phase does not measure whether a
// controller saw the index before or after the releases.
func waitRepository(b *testing.B, env *testenv.Env, ns string) {
	b.Helper()
	testenv.Eventually(b, 5*time.Minute, func(ctx context.Context) (bool, string) {
		repo := &sourcev1.HelmRepository{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bench"}, repo); err != nil {
			return false, err.Error()
		}
		return conditions.IsReady(repo) && repo.Status.Artifact != nil, "HelmRepository bench not ready"
	})
}

// BenchmarkHelmReleaseCRDs measures what extra CRDs cost the helm
// controller (Flux's ran out of memory with 100 CRDs installed before
// 2.3): 50 releases installed, then for each count of extra CRDs every
// release is upgraded (new values) and the peak RSS and live heap of that
// round are reported. Flat figures across the counts are the goal.
func BenchmarkHelmReleaseCRDs(b *testing.B) {
	const releases = 50
	env := testenv.Get(b)
	benchenv.StartWeir(b, env, controllers, concurrency)
	srv := helmserver.New(b, helmserver.Options{})
	srv.AddChart(b, benchChart())
	ns := env.Namespace(b)
	createRepository(b, env, ns, srv.URL())
	for i := range releases {
		createRelease(b, env, ns, releaseName(i), nil)
	}
	waitReleases(b, env, ns, releases, "")
	installed := 0
	for round, extra := range []int{0, 50, 500} {
		b.Run(fmt.Sprintf("crds=%d", extra), func(b *testing.B) {
			installed = installCRDs(b, env, installed, extra)
			for b.Loop() {
				greeting := fmt.Sprintf("round-%d", round)
				m := benchenv.Measure(func() {
					for i := range releases {
						setGreeting(b, env, ns, releaseName(i), greeting)
					}
					waitReleases(b, env, ns, releases, greeting)
				})
				b.ReportMetric(m.Elapsed.Seconds(), "s/all-upgraded")
				b.ReportMetric(m.RSSBefore, "MiB-rss-before")
				b.ReportMetric(m.PeakRSS, "MiB-peak-rss")
				b.ReportMetric(m.PeakHeap, "MiB-peak-heap")
			}
		})
	}
}

func releaseName(i int) string { return fmt.Sprintf("app-%04d", i) }

func createRepository(b *testing.B, env *testenv.Env, ns, url string) {
	b.Helper()
	repo := &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
		Spec:       sourcev1.HelmRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Hour}},
	}
	if err := env.Client.Create(context.Background(), repo); err != nil {
		b.Fatal(err)
	}
}

// createRelease creates a HelmRelease as `flux create hr` writes it.
func createRelease(b *testing.B, env *testenv.Env, ns, name string, values map[string]any) {
	b.Helper()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "bench-app", Version: "1.0.0",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: helmv2.HelmRepositoryKind, Name: "bench"},
			}},
		},
	}
	if values != nil {
		hr.Spec.Values = jsonValues(b, values)
	}
	if err := env.Client.Create(context.Background(), hr); err != nil {
		b.Fatal(err)
	}
}

func setGreeting(b *testing.B, env *testenv.Env, ns, name, greeting string) {
	b.Helper()
	hr := &helmv2.HelmRelease{}
	key := client.ObjectKey{Namespace: ns, Name: name}
	if err := env.Client.Get(context.Background(), key, hr); err != nil {
		b.Fatal(err)
	}
	patch := client.MergeFrom(hr.DeepCopy())
	hr.Spec.Values = jsonValues(b, map[string]any{"greeting": greeting})
	if err := env.Client.Patch(context.Background(), hr, patch); err != nil {
		b.Fatal(err)
	}
}

func jsonValues(b *testing.B, values map[string]any) *helmv2.Values {
	b.Helper()
	raw, err := yaml.Marshal(values)
	if err != nil {
		b.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		b.Fatal(err)
	}
	return &helmv2.Values{Raw: js}
}

// waitReleases waits until want HelmReleases in ns are Ready at their
// generation (and, with greeting, have applied those values). It lists
// them once and follows their watch, as benchenv.WaitFleet does: the
// earlier List every 50 ms was 1.7 GB of the 7.7 GB the benchmark process
// allocated during a 500-release phase and a quarter of its CPU samples,
// counted against weir's in-process figures.
func waitReleases(b *testing.B, env *testenv.Env, ns string, want int, greeting string) {
	b.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	done := map[string]bool{}
	see := func(t watch.EventType, hr *helmv2.HelmRelease) bool {
		if t != watch.Deleted && conditions.IsReady(hr) && hr.Status.ObservedGeneration == hr.Generation &&
			(greeting == "" || strings.Contains(string(hr.Spec.Values.Raw), greeting)) {
			done[hr.Name] = true
		} else {
			delete(done, hr.Name)
		}
		return len(done) == want
	}
	for {
		var list helmv2.HelmReleaseList
		if err := wc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			b.Fatalf("%d of %d HelmReleases ready: listing: %v", len(done), want, err)
		}
		clear(done)
		for i := range list.Items {
			see(watch.Modified, &list.Items[i])
		}
		if len(done) == want {
			return
		}
		err := benchenv.Follow(ctx, wc, &helmv2.HelmReleaseList{}, list.ResourceVersion, see, client.InNamespace(ns))
		if err != nil {
			b.Fatalf("timed out: %d of %d HelmReleases ready: %v", len(done), want, err)
		}
		if len(done) == want {
			return
		}
	}
}

// applyFloor renders the chart for n releases with Helm's client-only
// install and measures benchenv.Floor for them (rendering excluded).
func applyFloor(b *testing.B, env *testenv.Env, n int) time.Duration {
	b.Helper()
	ns := env.Namespace(b)
	var objs []*unstructured.Unstructured
	for i := range n {
		objs = append(objs, render(b, ns, releaseName(i))...)
	}
	return benchenv.Floor(b, env, ns, objs, n, concurrency)
}

// render is `helm template` of the benchmark chart for one release.
func render(b *testing.B, ns, name string) []*unstructured.Unstructured {
	b.Helper()
	cfg := action.NewConfiguration()
	cfg.Releases = storage.Init(driver.NewMemory())
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName, install.Namespace, install.Replace = name, ns, true
	rel, err := install.Run(benchChart(), nil)
	if err != nil {
		b.Fatalf("render %s: %v", name, err)
	}
	manifest, err := manifestOf(rel)
	if err != nil {
		b.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(manifest, "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			b.Fatalf("parse rendered %s: %v", name, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(ns)
		objs = append(objs, u)
	}
	return objs
}

// installCRDs creates CRDs until total exist (one kind per group) and
// waits until they are established; it returns total.
func installCRDs(b *testing.B, env *testenv.Env, have, total int) int {
	b.Helper()
	for i := have; i < total; i++ {
		group := fmt.Sprintf("g%04d.bench.weir.dev", i)
		if err := env.Client.Create(context.Background(), extraCRD(group)); err != nil {
			b.Fatalf("creating CRD %d: %v", i, err)
		}
	}
	testenv.Eventually(b, 10*time.Minute, func(ctx context.Context) (bool, string) {
		var list apiextensionsv1.CustomResourceDefinitionList
		if err := env.Client.List(ctx, &list); err != nil {
			return false, err.Error()
		}
		established := 0
		for _, crd := range list.Items {
			for _, c := range crd.Status.Conditions {
				if strings.HasSuffix(crd.Spec.Group, ".bench.weir.dev") && c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					established++
				}
			}
		}
		return established == total, fmt.Sprintf("%d of %d extra CRDs established", established, total)
	})
	return total
}

// manifestOf is the rendered manifest of a client-only install.
func manifestOf(rls any) (string, error) {
	switch r := rls.(type) {
	case *releasev1.Release:
		return r.Manifest, nil
	default:
		return "", fmt.Errorf("unexpected release type %T", rls)
	}
}

// extraCRD is a namespaced CRD of one kind, Widget, in group.
func extraCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}
