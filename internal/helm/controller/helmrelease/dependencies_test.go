package helmrelease

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

func dependsOn(refs ...meta.DependencyReference) func(*helmv2.HelmReleaseSpec) {
	return func(s *helmv2.HelmReleaseSpec) { s.DependsOn = refs }
}

// TestDependsOnWaitsThenFollowsAtOnce: b dependsOn a, which is suspended
// (never reconciled, so not Ready). b waits with Flux's reason, message and
// event and installs nothing; once a is resumed and Ready, b starts at
// once, although --requeue-dependency is an hour. The latency from a's
// Ready to b's start is logged.
func TestDependsOnWaitsThenFollowsAtOnce(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	a := f.helmRelease("a", func(s *helmv2.HelmReleaseSpec) { s.Suspend = true })
	b := f.helmRelease("b", dependsOn(meta.DependencyReference{Name: "a"}))
	f.env.Create(t, a, b)

	want := fmt.Sprintf("dependency '%s/a' is not ready", f.ns)
	ready := f.waitCondition(b, meta.ReadyCondition, metav1.ConditionFalse, meta.DependencyNotReadyReason)
	if ready.Message != want {
		t.Errorf("Ready message = %q, want %q", ready.Message, want)
	}
	f.env.AssertEvent(t, b, meta.DependencyNotReadyReason, want)
	if got := f.storageSecrets("b"); len(got) != 0 {
		t.Errorf("b installed while its dependency was not ready: %v", got)
	}

	f.env.Update(t, a, func() { a.Spec.Suspend = false })
	aReady, bStarted := f.followLatency(a, b)
	t.Logf("b started %s after a became Ready (requeue-dependency: 1h)", bStarted.Sub(aReady).Round(time.Millisecond))
	if d := bStarted.Sub(aReady); d > 2*time.Second {
		t.Errorf("b started %s after a was Ready, want at once", d)
	}
	f.waitReady(b, fmt.Sprintf("Helm install succeeded for release %s/b.v1 with chart app@1.0.0", f.ns))
}

// followLatency polls every 10 ms and returns when a was first seen
// Ready and when b's release was first seen in Helm's storage (the install
// writes its pending record before anything else).
func (f *fixture) followLatency(a, b *helmv2.HelmRelease) (aReady, bStarted time.Time) {
	f.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * testenv.DefaultTimeout)
	for aReady.IsZero() || bStarted.IsZero() {
		if time.Now().After(deadline) {
			f.t.Fatalf("a Ready at %v, b started at %v", aReady, bStarted)
		}
		now := time.Now()
		var got helmv2.HelmRelease
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(a), &got); err != nil {
			f.t.Fatal(err)
		}
		if aReady.IsZero() && conditions.IsReady(&got) && got.Status.ObservedGeneration == got.Generation {
			aReady = now
		}
		if bStarted.IsZero() && len(f.storageSecrets(b.Name)) > 0 {
			bStarted = now
		}
		time.Sleep(10 * time.Millisecond)
	}
	if bStarted.Before(aReady) {
		f.t.Fatalf("b started (%v) before a was Ready (%v)", bStarted, aReady)
	}
	return aReady, bStarted
}

// TestDependsOnPreparesTheChart: a spec.chart HelmRelease waiting for a
// dependency already has its HelmChart, as in Flux, so the chart is fetched
// while it waits.
func TestDependsOnPreparesTheChart(t *testing.T) {
	f := newFixture(t)
	a := f.helmRelease("a", func(s *helmv2.HelmReleaseSpec) { s.Suspend = true })
	b := f.helmRelease("b", func(s *helmv2.HelmReleaseSpec) {
		s.ChartRef = nil
		s.Chart = &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
			Chart: "app", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"},
		}}
		s.DependsOn = []meta.DependencyReference{{Name: "a"}}
	})
	f.env.Create(t, a, b)
	f.waitCondition(b, meta.ReadyCondition, metav1.ConditionFalse, meta.DependencyNotReadyReason)
	var hc sourcev1.HelmChart
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: f.ns + "-b"}, &hc); err != nil {
		t.Fatalf("the HelmChart of a waiting release: %v", err)
	}
	if b.Status.HelmChart != f.ns+"/"+f.ns+"-b" {
		t.Errorf("status.helmChart = %q", b.Status.HelmChart)
	}
}

// TestDependsOnReadyExpr: a readyExpr replaces the built-in check. a is
// suspended, never Ready: a dependent whose readyExpr holds installs, one
// whose readyExpr is false waits with Flux's message, and one whose
// readyExpr does not compile is Stalled with InvalidCELExpression.
func TestDependsOnReadyExpr(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	a := f.helmRelease("a", func(s *helmv2.HelmReleaseSpec) { s.Suspend = true })
	holds := f.helmRelease("holds", dependsOn(meta.DependencyReference{Name: "a", ReadyExpr: "dep.spec.suspend == true"}))
	fails := f.helmRelease("fails", dependsOn(meta.DependencyReference{Name: "a", ReadyExpr: "dep.spec.suspend == false"}))
	invalid := f.helmRelease("invalid", dependsOn(meta.DependencyReference{Name: "a", ReadyExpr: "dep.spec.suspend"}))
	f.env.Create(t, a, holds, fails, invalid)

	f.waitReady(holds, fmt.Sprintf("Helm install succeeded for release %s/holds.v1 with chart app@1.0.0", f.ns))
	ready := f.waitCondition(fails, meta.ReadyCondition, metav1.ConditionFalse, meta.DependencyNotReadyReason)
	if want := fmt.Sprintf("dependency '%s/a' is not ready according to readyExpr eval", f.ns); ready.Message != want {
		t.Errorf("Ready message = %q, want %q", ready.Message, want)
	}
	stalled := f.waitCondition(invalid, meta.StalledCondition, metav1.ConditionTrue, meta.InvalidCELExpressionReason)
	if !strings.HasPrefix(stalled.Message, "Reconciliation failed terminally due to configuration error: dependency '"+f.ns+"/a'") {
		t.Errorf("Stalled message = %q", stalled.Message)
	}
}

// TestDependsOnCycleIsNamed: p and q depend on each other. Each is
// Stalled with the cycle named (Flux would wait forever without saying
// why), and breaking the cycle lets both through without a timer.
func TestDependsOnCycleIsNamed(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	p := f.helmRelease("p", dependsOn(meta.DependencyReference{Name: "q"}))
	q := f.helmRelease("q", dependsOn(meta.DependencyReference{Name: "p"}))
	f.env.Create(t, p, q)
	want := fmt.Sprintf("dependency cycle: %s/p -> %s/q -> %s/p", f.ns, f.ns, f.ns)
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		stalled := f.waitCondition(p, meta.StalledCondition, metav1.ConditionTrue, meta.DependencyNotReadyReason)
		return stalled.Message == want, stalled.Message
	})
	if r := conditions.Get(p, meta.ReadyCondition); r == nil || r.Message != want {
		t.Errorf("Ready = %+v, want the cycle", r)
	}

	f.env.Update(t, q, func() { q.Spec.DependsOn = nil })
	f.waitReady(q, fmt.Sprintf("Helm install succeeded for release %s/q.v1 with chart app@1.0.0", f.ns))
	f.waitReady(p, fmt.Sprintf("Helm install succeeded for release %s/p.v1 with chart app@1.0.0", f.ns))
}
