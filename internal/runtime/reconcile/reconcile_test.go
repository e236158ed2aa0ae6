package reconcile

import (
	"errors"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/runtime/errs"
)

func TestResult(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		err     error
		requeue time.Duration
		retErr  bool
	}{
		{"success requeues after the interval", nil, time.Minute, false},
		{"stall waits for a spec change", &errs.Stalling{Err: boom}, 0, false},
		{"wait requeues after its delay", &errs.Waiting{Err: boom, RequeueAfter: 5 * time.Second}, 5 * time.Second, false},
		{"in progress looks again after its delay", &errs.InProgress{Err: boom, RequeueAfter: 7 * time.Second}, 7 * time.Second, false},
		{"failure retries with backoff", &errs.Generic{Err: boom}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Result(time.Minute, 0, tt.err)
			if res.RequeueAfter != tt.requeue || (err != nil) != tt.retErr {
				t.Errorf("Result = %+v, %v", res, err)
			}
		})
	}
}

func TestJitterStaysWithinBounds(t *testing.T) {
	for range 1000 {
		d := Jitter(10*time.Minute, 10)
		if d < 9*time.Minute || d > 11*time.Minute {
			t.Fatalf("jittered interval %s outside ±10%%", d)
		}
	}
	if Jitter(time.Minute, 0) != time.Minute {
		t.Error("zero jitter changed the interval")
	}
}
