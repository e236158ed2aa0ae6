// Package conditionstest checks an object's conditions in tests the way a
// person reads them: Ready's status, reason and message, and which other
// types are present with which status.
package conditionstest

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// Absent in a Want map means the condition type must not be there.
const Absent metav1.ConditionStatus = ""

// Want is what a test expects of an object's conditions.
type Want struct {
	// Ready, Reason and Message are the Ready condition's.
	Ready   metav1.ConditionStatus
	Reason  string
	Message string
	// Others maps condition types to their status, Absent for none.
	Others map[string]metav1.ConditionStatus
}

// Expect reports every way obj's conditions differ from want.
func Expect(t testing.TB, obj conditions.Object, want Want) {
	t.Helper()
	ready := conditions.Get(obj, meta.ReadyCondition)
	if ready == nil || ready.Status != want.Ready || ready.Reason != want.Reason || ready.Message != want.Message {
		t.Errorf("Ready = %+v, want %s %s %q", ready, want.Ready, want.Reason, want.Message)
	}
	for c, status := range want.Others {
		got := conditions.Get(obj, c)
		switch {
		case status == Absent && got != nil:
			t.Errorf("%s present: %+v", c, got)
		case status != Absent && (got == nil || got.Status != status):
			t.Errorf("%s = %+v, want %s", c, got, status)
		}
	}
}
