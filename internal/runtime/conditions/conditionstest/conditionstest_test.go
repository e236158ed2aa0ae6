package conditionstest

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.errors++ }

func TestExpect(t *testing.T) {
	obj := &sourcev1.GitRepository{}
	conditions.MarkReady(obj, meta.SucceededReason, "stored")
	conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, meta.SucceededReason, "stored")
	tests := []struct {
		name   string
		want   Want
		errors int
	}{
		{"matches", Want{Ready: metav1.ConditionTrue, Reason: meta.SucceededReason, Message: "stored",
			Others: map[string]metav1.ConditionStatus{sourcev1.ArtifactInStorageCondition: metav1.ConditionTrue, sourcev1.FetchFailedCondition: Absent}}, 0},
		{"wrong Ready message", Want{Ready: metav1.ConditionTrue, Reason: meta.SucceededReason, Message: "other"}, 1},
		{"a present type wanted absent, an absent one wanted", Want{Ready: metav1.ConditionTrue, Reason: meta.SucceededReason, Message: "stored",
			Others: map[string]metav1.ConditionStatus{sourcev1.ArtifactInStorageCondition: Absent, sourcev1.FetchFailedCondition: metav1.ConditionTrue}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			Expect(r, obj, tt.want)
			if r.errors != tt.errors {
				t.Errorf("Expect reported %d differences, want %d", r.errors, tt.errors)
			}
		})
	}
}
