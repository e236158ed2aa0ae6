package helmchart

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/controller/bucket"
	"github.com/weir-gitops/weir/internal/source/controller/gitrepository"
	"github.com/weir-gitops/weir/internal/source/controller/helmrepository"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// testMaxChartSize is --helm-chart-max-size in these tests, small enough
// for a test chart to exceed.
const testMaxChartSize = 64 << 10

// storage is the artifact store of the reconcilers the tests run against.
var storage *artifact.Storage

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startControllers })
}

// startControllers runs the HelmChart reconciler with the GitRepository
// and HelmRepository reconcilers that produce its sources, sharing one
// artifact store and one index cache, as weir-controller does.
func startControllers(ctx context.Context, env *testenv.Env) (err error) {
	if storage, err = testenv.StartArtifactStorage(ctx); err != nil {
		return err
	}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		deps := testenv.SourceDeps(mgr, storage)
		deps.Helm.Limits = helmrepo.Limits{MaxChartSize: testMaxChartSize}
		deps.Helm.Cache = helmrepo.NewCache(helmrepo.CacheOptions{MaxSize: 10})
		deps.Auth = &auth.Settings{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: auth.NewCache(100, time.Hour)}
		if err := (&gitrepository.Reconciler{Deps: deps}).SetupWithManager(mgr, testenv.FastQueue); err != nil {
			return err
		}
		if err := (&helmrepository.Reconciler{Deps: deps}).SetupWithManager(mgr, testenv.FastQueue); err != nil {
			return err
		}
		if err := (&bucket.Reconciler{Deps: deps}).SetupWithManager(mgr, testenv.FastQueue); err != nil {
			return err
		}
		return (&Reconciler{Deps: deps, OCI: cloudRegistries{oci.NewClient()}}).SetupWithManager(mgr, testenv.FastQueue)
	})
}

func newChart(ns, name, kind, source, chartName, version string) *sourcev1.HelmChart {
	return &sourcev1.HelmChart{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sourcev1.HelmChartSpec{
			Chart: chartName, Version: version, Interval: metav1.Duration{Duration: time.Hour},
			SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: kind, Name: source},
		},
	}
}

func newHelmRepo(ns, name, url, secret string) *sourcev1.HelmRepository {
	hr := &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       sourcev1.HelmRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Hour}},
	}
	if secret != "" {
		hr.Spec.SecretRef = &meta.LocalObjectReference{Name: secret}
	}
	return hr
}

// newGitRepo is the GitRepository "app" following main at url.
func newGitRepo(ns, url string) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: url, Reference: &sourcev1.GitRepositoryRef{Branch: "main"}, Interval: metav1.Duration{Duration: time.Hour},
		},
	}
}

// basicAuthSecret holds the login "user" with pass.
func basicAuthSecret(ns, name, pass string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data:       map[string][]byte{"username": []byte("user"), "password": []byte(pass)},
	}
}

// waitVersion waits until hc is Ready with an artifact at version.
func waitVersion(t *testing.T, env *testenv.Env, hc *sourcev1.HelmChart, version string) {
	t.Helper()
	env.WaitForReady(t, hc, func() (bool, string) {
		if a := hc.Status.Artifact; a == nil || a.Revision != version {
			return false, "version " + version + " not stored yet"
		}
		return true, ""
	})
}
