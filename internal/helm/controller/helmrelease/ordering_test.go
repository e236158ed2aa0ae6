package helmrelease

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/kustomize/controller/kustomization"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/controller/gitrepository"
)

// startKustomizations runs the GitRepository and Kustomization reconcilers
// beside the HelmRelease one, for the ordering test across kinds.
func startKustomizations(ctx context.Context, mgr ctrl.Manager) error {
	git := &gitrepository.Reconciler{Deps: testenv.SourceDeps(mgr, storage)}
	if err := git.SetupWithManager(mgr, testenv.FastQueue); err != nil {
		return err
	}
	k := &kustomization.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Clients: &kustomization.ClientFactory{
			Config: mgr.GetConfig(), Mapper: mgr.GetRESTMapper(), Scheme: mgr.GetScheme(), Reader: mgr.GetAPIReader(),
		},
		Events:  events.NewRecorder(mgr.GetEventRecorderFor(kustomization.ControllerName), mgr.GetScheme(), kustomization.ControllerName, "test", ""), //nolint:staticcheck // SA1019: as in internal/app
		Fetcher: &artifact.Fetcher{Retries: 1},
		Options: kustomization.Options{RequeueDependency: time.Hour, HealthPollInterval: 200 * time.Millisecond},
	}
	return k.SetupWithManager(ctx, mgr, testenv.FastQueue)
}

// hrManifest is a HelmRelease of the fixture's HelmChart, as Git holds it.
func hrManifest(name string) string {
	return fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %s
spec:
  interval: 1h
  timeout: 1m
  chartRef:
    kind: HelmChart
    name: app
`, name)
}

// TestOrderingWithKustomizations: a HelmRelease's dependsOn names
// HelmReleases only (Flux's API has no kind in it), so ordering across
// kinds goes through the Kustomization that applies the release, as in
// Flux. Kustomization infra applies HelmRelease platform and waits for it
// (wait: true reads the HelmRelease's Ready through kstatus);
// Kustomization apps dependsOn infra and applies HelmRelease web. So a
// Kustomization follows a HelmRelease (apps waits for platform), and a
// HelmRelease follows a Kustomization (web is not even created before
// infra is Ready). The chart is published last: until then platform waits
// for it, and with it everything downstream.
func TestOrderingWithKustomizations(t *testing.T) {
	f := newFixture(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	srv.Commit(t, "fleet.git", gitserver.Commit{Message: "fleet", Files: map[string]string{
		"infra/platform.yaml": hrManifest("platform"),
		"apps/web.yaml":       hrManifest("web"),
	}})
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: f.ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: srv.HTTPURL("fleet.git"), Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			Interval: metav1.Duration{Duration: time.Hour},
		},
	}
	ks := func(name string, change func(*kustomizev1.KustomizationSpec)) *kustomizev1.Kustomization {
		k := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
			Spec: kustomizev1.KustomizationSpec{
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: repo.Name},
				Path:      "./" + name, Prune: true, TargetNamespace: f.ns,
				Interval: metav1.Duration{Duration: time.Hour}, Timeout: &metav1.Duration{Duration: time.Minute},
			},
		}
		change(&k.Spec)
		return k
	}
	infra := ks("infra", func(s *kustomizev1.KustomizationSpec) { s.Wait = true })
	apps := ks("apps", func(s *kustomizev1.KustomizationSpec) { s.DependsOn = []meta.DependencyReference{{Name: "infra"}} })
	f.env.Create(t, repo, infra, apps)

	platform := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: f.ns}}
	f.waitCondition(platform, meta.ReadyCondition, metav1.ConditionFalse, helmv2.ArtifactFailedReason)
	ready := f.waitKustomization(apps, metav1.ConditionFalse, meta.DependencyNotReadyReason)
	if want := fmt.Sprintf("dependency '%s/infra' is not ready", f.ns); ready.Message != want {
		t.Errorf("apps: Ready message %q, want %q", ready.Message, want)
	}
	web := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns}}
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(web), web); !apierrors.IsNotFound(err) {
		t.Fatalf("web exists before infra is Ready: %v", err)
	}

	f.publish(newChart("1.0.0"))
	f.waitReady(platform, fmt.Sprintf("Helm install succeeded for release %s/platform.v1 with chart app@1.0.0", f.ns))
	f.waitKustomization(infra, metav1.ConditionTrue, meta.ReconciliationSucceededReason)
	f.waitKustomization(apps, metav1.ConditionTrue, meta.ReconciliationSucceededReason)
	f.waitReady(web, fmt.Sprintf("Helm install succeeded for release %s/web.v1 with chart app@1.0.0", f.ns))
	if p, w := conditions.Get(platform, meta.ReadyCondition), conditions.Get(web, meta.ReadyCondition); w.LastTransitionTime.Before(&p.LastTransitionTime) {
		t.Errorf("web Ready at %v, before platform at %v", w.LastTransitionTime, p.LastTransitionTime)
	}
}

// waitKustomization waits until k's Ready condition has status and reason.
func (f *fixture) waitKustomization(k *kustomizev1.Kustomization, status metav1.ConditionStatus, reason string) *metav1.Condition {
	f.t.Helper()
	var ready *metav1.Condition
	testenv.Eventually(f.t, 2*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
			return false, err.Error()
		}
		if ready = conditions.Get(k, meta.ReadyCondition); ready == nil {
			return false, "no Ready condition"
		}
		return ready.Status == status && ready.Reason == reason, fmt.Sprintf("%s=%s %s: %s", k.Name, ready.Status, ready.Reason, ready.Message)
	})
	return ready
}
