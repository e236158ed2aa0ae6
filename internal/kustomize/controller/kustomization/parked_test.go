package kustomization

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestParkedHealthChecksFreeWorkersAndFollowWatches parks more health
// checks than the controller has workers (the test queue has 4): each
// waits up to 10 minutes for a Deployment that does not exist yet. Another
// Kustomization is still applied at once, because a waiting Kustomization
// gives its worker back. When a Deployment appears and rolls out, the watch
// (not a timer: nothing is due for 10 minutes) wakes the one that waits for
// it, and only that one.
func TestParkedHealthChecksFreeWorkersAndFollowWatches(t *testing.T) {
	t.Parallel()
	f, sha := newFixture(t, map[string]string{"app/cm.yaml": configMapYAML("c", "k", "v")})
	rev := "main@sha1:" + sha
	const waiting = 6
	ks := make([]*kustomizev1.Kustomization, waiting)
	for i := range ks {
		ks[i] = f.kustomization(fmt.Sprintf("waits-%d", i), "./app", func(s *kustomizev1.KustomizationSpec) {
			s.Prune = false
			s.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
			s.HealthChecks = []meta.NamespacedObjectKindReference{{APIVersion: "apps/v1", Kind: "Deployment",
				Name: fmt.Sprintf("later-%d", i), Namespace: f.ns}}
		})
		f.env.Create(t, ks[i])
	}
	for _, k := range ks {
		waitProgress(t, f, k, "Running health checks for revision "+rev+" with a timeout of 10m0s")
	}

	free := f.kustomization("free", "./app", func(s *kustomizev1.KustomizationSpec) { s.Prune = false })
	start := time.Now()
	f.env.Create(t, free)
	f.waitApplied(free, rev)
	t.Logf("applied with %d health checks parked: %s", waiting, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	f.env.Create(t, deployment("later-0", f.ns))
	f.waitApplied(ks[0], rev)
	t.Logf("Ready %s after its Deployment was created", time.Since(start).Round(time.Millisecond))
	if h := conditions.Get(ks[0], meta.HealthyCondition); h == nil || h.Status != metav1.ConditionTrue {
		t.Errorf("Healthy = %+v after the Deployment rolled out", h)
	}
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(ks[1]), ks[1]); err != nil {
		t.Fatal(err)
	}
	if r := conditions.Get(ks[1], meta.ReconcilingCondition); r == nil || r.Status != metav1.ConditionTrue || ks[1].Status.LastAppliedRevision != "" {
		t.Errorf("waits-1 woke with its Deployment missing: Reconciling %+v, applied %q", r, ks[1].Status.LastAppliedRevision)
	}
}

// TestParkedHealthCheckOutlivesItsDependencyRun parks a dependent's health
// check (it waits for a Deployment that does not exist yet), then breaks
// the dependency (a path that is not in the source). The dependent applied
// under a gate that held; when its Deployment rolls out, its wait ends as
// Flux's inline health check would: Healthy, and the revision applied.
// Before, the wake read the dependencies first and threw the wait away, so
// the revision was never recorded as applied.
//
// Ready itself is not asserted to stay True: a later run of the dependent
// (queued by the broken dependency's status changes) reports
// DependencyNotReady, as Flux's next interval would. Healthy and
// lastAppliedRevision outlive that run, so they are what is waited for.
func TestParkedHealthCheckOutlivesItsDependencyRun(t *testing.T) {
	t.Parallel()
	f, sha := newFixture(t, map[string]string{
		"dep/cm.yaml":   configMapYAML("dep", "k", "v"),
		"waits/cm.yaml": configMapYAML("waits", "k", "v"),
	})
	rev := "main@sha1:" + sha
	dep := f.kustomization("dep", "./dep", func(s *kustomizev1.KustomizationSpec) { s.Prune = false })
	f.env.Create(t, dep)
	f.waitApplied(dep, rev)

	waits := f.kustomization("waits", "./waits", func(s *kustomizev1.KustomizationSpec) {
		s.Prune = false
		s.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
		s.DependsOn = []meta.DependencyReference{{Name: "dep"}}
		s.HealthChecks = []meta.NamespacedObjectKindReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "later", Namespace: f.ns}}
	})
	f.env.Create(t, waits)
	waitProgress(t, f, waits, "Running health checks for revision "+rev+" with a timeout of 10m0s")

	f.env.Update(t, dep, func() { dep.Spec.Path = "./missing" })
	f.waitFailed(dep, rev, meta.ArtifactFailedReason)

	f.env.Create(t, deployment("later", f.ns))
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(waits), waits); err != nil {
			return false, err.Error()
		}
		h := conditions.Get(waits, meta.HealthyCondition)
		if h == nil || h.Status != metav1.ConditionTrue {
			return false, fmt.Sprintf("Healthy = %+v, Ready = %+v", h, conditions.Get(waits, meta.ReadyCondition))
		}
		return waits.Status.LastAppliedRevision == rev, "last applied " + waits.Status.LastAppliedRevision
	})
}

// deployment is a one-container Deployment labelled app=name.
func deployment(name, ns string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
			},
		},
	}
}
