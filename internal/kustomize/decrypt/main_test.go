package decrypt

import (
	"fmt"
	"os"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/offline"
)

// TestMain keeps the key services' SDKs off the network: a test reaches
// only the fakes it starts.
func TestMain(m *testing.M) {
	dir, err := offline.Apply()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = os.Setenv("HOME", dir) // no ~/.vault-token, no ~/.azure
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
