package conditions

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestTransitions(t *testing.T) {
	tests := []struct {
		name      string
		mark      func(Object)
		ready     metav1.ConditionStatus
		present   []string
		absent    []string
		readyText string
	}{
		{
			name:    "reconciling",
			mark:    func(o Object) { MarkReconciling(o, meta.ProgressingReason, "building revision %s", "main@sha1:abc") },
			ready:   metav1.ConditionUnknown,
			present: []string{meta.ReconcilingCondition}, absent: []string{meta.StalledCondition},
			readyText: "building revision main@sha1:abc",
		},
		{
			name:    "stalled",
			mark:    func(o Object) { MarkStalled(o, meta.InvalidURLReason, "invalid url") },
			ready:   metav1.ConditionFalse,
			present: []string{meta.StalledCondition}, absent: []string{meta.ReconcilingCondition},
			readyText: "invalid url",
		},
		{
			name:    "failed with retry",
			mark:    func(o Object) { MarkFailed(o, "GitOperationFailed", "connection refused") },
			ready:   metav1.ConditionFalse,
			present: []string{meta.ReconcilingCondition}, absent: []string{meta.StalledCondition},
			readyText: "connection refused",
		},
		{
			name:    "error that stalls",
			mark:    func(o Object) { MarkError(o, meta.InvalidURLReason, &errs.Stalling{Err: errors.New("invalid url")}) },
			ready:   metav1.ConditionFalse,
			present: []string{meta.StalledCondition}, absent: []string{meta.ReconcilingCondition},
			readyText: "invalid url",
		},
		{
			name: "error that is retried",
			mark: func(o Object) {
				MarkError(o, "GitOperationFailed", fmt.Errorf("fetch: %w", errors.New("connection refused")))
			},
			ready:   metav1.ConditionFalse,
			present: []string{meta.ReconcilingCondition}, absent: []string{meta.StalledCondition},
			readyText: "fetch: connection refused",
		},
		{
			name: "ready",
			mark: func(o Object) {
				MarkReady(o, meta.SucceededReason, "stored artifact for revision '%s'", "main@sha1:abc")
			},
			ready:     metav1.ConditionTrue,
			absent:    []string{meta.ReconcilingCondition, meta.StalledCondition},
			readyText: "stored artifact for revision 'main@sha1:abc'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			MarkReconciling(obj, meta.ProgressingReason, "start")
			MarkStalled(obj, "Old", "old")
			tt.mark(obj)
			ready := Get(obj, meta.ReadyCondition)
			if ready == nil || ready.Status != tt.ready || ready.Message != tt.readyText || ready.ObservedGeneration != 3 {
				t.Fatalf("Ready = %+v, want status %s message %q generation 3", ready, tt.ready, tt.readyText)
			}
			for _, c := range tt.present {
				if !IsTrue(obj, c) {
					t.Errorf("%s not True", c)
				}
			}
			for _, c := range tt.absent {
				if Get(obj, c) != nil {
					t.Errorf("%s present", c)
				}
			}
		})
	}
}

func TestIsReadyNeedsCurrentGeneration(t *testing.T) {
	obj := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	MarkReady(obj, meta.SucceededReason, "ok")
	if !IsReady(obj) {
		t.Fatal("not ready at generation 1")
	}
	obj.Generation = 2
	if IsReady(obj) {
		t.Fatal("ready for a generation it has not seen")
	}
}

func TestLongMessagesAreTrimmed(t *testing.T) {
	obj := &sourcev1.GitRepository{}
	MarkFalse(obj, meta.ReadyCondition, "X", "%s", strings.Repeat("x", 40000))
	if n := len(Get(obj, meta.ReadyCondition).Message); n != maxMessage {
		t.Errorf("message length %d, want %d", n, maxMessage)
	}
}
