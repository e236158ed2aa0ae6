package browsertest

import (
	"testing"

	"k8s.io/client-go/rest"
)

// startUI serves the UI for the user of cfg and returns its URL.
func startUI(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	_ = cfg
	t.Skip("internal/ui/server is not merged yet")
	return ""
}
