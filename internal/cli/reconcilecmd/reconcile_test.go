package reconcilecmd

import "testing"

func TestHandled(t *testing.T) {
	const token = "2026-11-29T20:00:00.123456789Z"
	for _, tt := range []struct {
		handled string
		want    bool
	}{
		{token, true},
		{"", false},
		{"2026-11-29T19:59:59Z", false},
		{"2026-11-29T20:00:01Z", true}, // a later request covers ours
		{"not-a-time", false},
	} {
		if got := Handled(tt.handled, token); got != tt.want {
			t.Errorf("Handled(%q) = %v, want %v", tt.handled, got, tt.want)
		}
	}
}
