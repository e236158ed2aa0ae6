package dependency_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
)

// TestWatchPasses: the dependents watch passes a dependency's creation,
// deletion and a change of what a dependent's check reads, and nothing
// else: not a run in progress, not a label.
func TestWatchPasses(t *testing.T) {
	p := kind.Watch(nil).Predicates[0]
	base := release("dep", metav1.ConditionFalse, 1, 1)
	change := func(f func(*helmv2.HelmRelease)) *helmv2.HelmRelease {
		hr := base.DeepCopy()
		f(hr)
		return hr
	}
	tests := []struct {
		name  string
		newer *helmv2.HelmRelease
		want  bool
	}{
		{"nothing", base.DeepCopy(), false},
		{"a label", change(func(hr *helmv2.HelmRelease) { hr.Labels = map[string]string{"a": "b"} }), false},
		{"became ready", change(func(hr *helmv2.HelmRelease) { hr.Status.Conditions[0].Status = metav1.ConditionTrue }), true},
		{"new generation observed", change(func(hr *helmv2.HelmRelease) { hr.Generation, hr.Status.ObservedGeneration = 2, 2 }), true},
		{"revision", change(func(hr *helmv2.HelmRelease) { hr.Status.LastAttemptedRevision = "2.0.0" }), true},
		{"ready unknown while a run progresses", change(func(hr *helmv2.HelmRelease) {
			hr.Status.Conditions = []metav1.Condition{
				{Type: meta.ReadyCondition, Status: metav1.ConditionUnknown, Reason: meta.ProgressingReason},
				{Type: meta.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: meta.ProgressingReason},
			}
		}), false},
	}
	for _, tt := range tests {
		if got := p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: tt.newer}); got != tt.want {
			t.Errorf("%s: Update = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: base}) || !p.Delete(event.DeleteEvent{Object: base}) || p.Generic(event.GenericEvent{Object: base}) {
		t.Error("create and delete pass, generic does not")
	}
}
