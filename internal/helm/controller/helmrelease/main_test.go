package helmrelease

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/controller/ocirepository"
)

// The tests run the HelmRelease reconciler (and the OCIRepository one)
// against a real control plane with a kwok node, so Deployments become
// Available. HelmChart artifacts are served from the test's artifact
// storage with the HelmChart's status written by hand, until the HelmChart
// controller lands.
var storage *artifact.Storage

// reconciler is the HelmRelease reconciler the tests run, for the test
// that plays a restarted controller by dropping its parked waits.
var reconciler *Reconciler

// WEIR_HELM_DEBUG=1 prints the controllers' logs (each Helm decision at
// debug level).
func TestMain(m *testing.M) {
	if os.Getenv("WEIR_HELM_DEBUG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
	testenv.Main(m, func(o *testenv.Options) { o.Setup = startControllers })
}

func startControllers(ctx context.Context, env *testenv.Env) error {
	var err error
	if storage, err = testenv.StartArtifactStorage(ctx); err != nil {
		return err
	}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		oci := &ocirepository.Reconciler{Deps: testenv.SourceDeps(mgr, storage)}
		if err := oci.SetupWithManager(mgr, testenv.FastQueue); err != nil {
			return err
		}
		if err := startKustomizations(ctx, mgr); err != nil {
			return err
		}
		r := &Reconciler{
			Client:    mgr.GetClient(),
			APIReader: mgr.GetAPIReader(),
			Config:    mgr.GetConfig(),
			Clusters: &restconfig.Resolver{Config: mgr.GetConfig(), Reader: mgr.GetAPIReader(), KubeConfigIdentity: &auth.Settings{
				ObjectLevel: true, DefaultServiceAccount: kubeConfigDefaultSA,
				Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: auth.NewCache(10, time.Hour),
			}},
			Events:  events.NewRecorder(mgr.GetEventRecorderFor(ControllerName), mgr.GetScheme(), ControllerName, "test", ""), //nolint:staticcheck // SA1019: as in internal/app
			Fetcher: &artifact.Fetcher{Retries: 1},
			Options: Options{
				// An hour: a dependent that starts in these tests was
				// queued by a watch, not by a timer.
				RequeueDependency: time.Hour,
				ConfigsSelector:   labels.SelectorFromSet(labels.Set{"reconcile.fluxcd.io/watch": "Enabled"}),
			},
		}
		if err := r.WatchHealth(mgr); err != nil {
			return err
		}
		reconciler = r
		return r.SetupWithManager(ctx, mgr, testenv.FastQueue)
	})
}

// deploymentTemplate is a Deployment that never becomes available when
// .Values.unschedulable is set (no node matches its selector).
const deploymentTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
    spec:
      {{- if .Values.unschedulable }}
      nodeSelector:
        no-such: node
      {{- end }}
      containers:
        - name: app
          image: "example.com/app:{{ .Values.tag | default "v1" }}"
`

// newChart is helmrepo's chart (a ConfigMap showing the values) with a
// Deployment.
func newChart(version string) *chartv2.Chart {
	ch := helmserver.NewChart("app", version, "1.0")
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/deployment.yaml", Data: []byte(deploymentTemplate), ModTime: ch.ModTime})
	return ch
}

// packageChart returns the .tgz of ch.
func packageChart(t *testing.T, ch *chartv2.Chart) []byte {
	t.Helper()
	dir := t.TempDir()
	p, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Clean(p))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is one test's namespace and HelmChart.
type fixture struct {
	t     *testing.T
	env   *testenv.Env
	ns    string
	chart *sourcev1.HelmChart
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := testenv.Get(t)
	f := &fixture{t: t, env: env, ns: env.Namespace(t)}
	f.chart = &sourcev1.HelmChart{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
		Spec: sourcev1.HelmChartSpec{
			Chart: "app", Version: "*", Interval: metav1.Duration{Duration: time.Hour},
			SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: "none"},
		},
	}
	env.Create(t, f.chart)
	return f
}

// publish stores ch as the HelmChart's artifact, as the source controller
// would, and writes the HelmChart's status by hand.
func (f *fixture) publish(ch *chartv2.Chart) {
	f.t.Helper()
	a := storage.NewArtifactFor(sourcev1.HelmChartKind, f.chart, ch.Metadata.Version, fmt.Sprintf("%s-%s.tgz", ch.Name(), ch.Metadata.Version))
	if err := storage.Copy(context.Background(), &a, bytes.NewReader(packageChart(f.t, ch))); err != nil {
		f.t.Fatal(err)
	}
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(f.chart), f.chart); err != nil {
			return false, err.Error()
		}
		f.chart.Status.Artifact = &a
		f.chart.Status.ObservedGeneration = f.chart.Generation
		conditions.MarkReady(f.chart, meta.SucceededReason, "pulled 'app' chart with version '%s'", ch.Metadata.Version)
		if err := f.env.Client.Status().Update(ctx, f.chart); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// helmRelease returns a HelmRelease of the fixture's chart with a short
// timeout.
func (f *fixture) helmRelease(name string, change func(*helmv2.HelmReleaseSpec)) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.HelmChartKind, Name: f.chart.Name},
			Interval: metav1.Duration{Duration: time.Hour},
			Timeout:  &metav1.Duration{Duration: time.Minute},
		},
	}
	if change != nil {
		change(&hr.Spec)
	}
	return hr
}

// waitReady waits until hr is Ready with message.
func (f *fixture) waitReady(hr *helmv2.HelmRelease, message string) {
	f.t.Helper()
	f.env.WaitForReady(f.t, hr, func() (bool, string) {
		c := conditions.Get(hr, meta.ReadyCondition)
		return c.Message == message, c.Message
	})
}

// waitCondition waits until hr's condition t has status and reason.
func (f *fixture) waitCondition(hr *helmv2.HelmRelease, t string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	f.t.Helper()
	var got *metav1.Condition
	testenv.Eventually(f.t, 2*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, err.Error()
		}
		got = conditions.Get(hr, t)
		if os.Getenv("WEIR_HELM_DEBUG") != "" {
			f.t.Logf("%s: %v failures i%d u%d history %v", hr.Name, describe(hr), hr.Status.InstallFailures, hr.Status.UpgradeFailures, historyOf(hr))
		}
		if got == nil {
			return false, "no " + t
		}
		return got.Status == status && got.Reason == reason, fmt.Sprintf("%s=%s %s: %s", t, got.Status, got.Reason, got.Message)
	})
	return got
}

// storageSecrets returns the names of the release's Helm storage Secrets.
func (f *fixture) storageSecrets(release string) []string {
	f.t.Helper()
	var list corev1.SecretList
	if err := f.env.Client.List(context.Background(), &list, client.InNamespace(f.ns),
		client.MatchingLabels{"owner": "helm", "name": release}); err != nil {
		f.t.Fatal(err)
	}
	names := make([]string, 0, len(list.Items))
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	return names
}

func (f *fixture) configMap(name string) *corev1.ConfigMap {
	f.t.Helper()
	var cm corev1.ConfigMap
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, &cm); err != nil {
		f.t.Fatalf("ConfigMap %s: %v", name, err)
	}
	return &cm
}

// waitGone waits until obj no longer exists.
func (f *fixture) waitGone(obj client.Object) {
	f.t.Helper()
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), fmt.Sprintf("%T %s still there", obj, obj.GetName())
	})
}

func describe(hr *helmv2.HelmRelease) []string {
	out := []string{}
	for _, c := range hr.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s %s: %.120s", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}
