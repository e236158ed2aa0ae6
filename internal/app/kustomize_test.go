package app

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// TestDisableConfigWatchers: the gate turns off both the labelled config
// watches and the substitution followers.
func TestDisableConfigWatchers(t *testing.T) {
	sel := labels.SelectorFromSet(labels.Set{"reconcile.fluxcd.io/watch": "Enabled"})
	for _, tt := range []struct {
		name   string
		gates  map[string]bool
		want   labels.Selector
		follow bool
	}{
		{"default", nil, sel, true},
		{"gate off", map[string]bool{"DisableConfigWatchers": false}, sel, true},
		{"gate on", map[string]bool{"DisableConfigWatchers": true}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := configsUnlessDisabled(sel, tt.gates); (got == nil) != (tt.want == nil) || got != nil && got.String() != tt.want.String() {
				t.Errorf("selector = %v, want %v", got, tt.want)
			}
			if got := followConfigs(tt.gates); got != tt.follow {
				t.Errorf("followers = %v, want %v", got, tt.follow)
			}
		})
	}
}
