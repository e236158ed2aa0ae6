package errs

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestReasonThroughWrapping(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name     string
		err      error
		reason   string
		stalling bool
		waiting  bool
	}{
		{"plain", base, "Fallback", false, false},
		{"generic", &Generic{Err: base, Reason: "GitOperationFailed"}, "GitOperationFailed", false, false},
		{"stalling wrapped", fmt.Errorf("phase: %w", &Stalling{Err: base, Reason: "URLInvalid"}), "URLInvalid", true, false},
		{"waiting", &Waiting{Err: base, Reason: "DependencyNotReady", RequeueAfter: time.Second}, "DependencyNotReady", false, true},
		{"no reason", &Generic{Err: base}, "Fallback", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Reason(tt.err, "Fallback"); got != tt.reason {
				t.Errorf("Reason = %q, want %q", got, tt.reason)
			}
			if IsStalling(tt.err) != tt.stalling {
				t.Errorf("IsStalling = %v", !tt.stalling)
			}
			if _, ok := AsWaiting(tt.err); ok != tt.waiting {
				t.Errorf("AsWaiting = %v", ok)
			}
			if !errors.Is(tt.err, base) {
				t.Error("base error lost")
			}
		})
	}
}
