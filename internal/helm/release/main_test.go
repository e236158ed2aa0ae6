package release

import (
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// The tests that need a cluster (capabilities_test.go) share one API
// server without a node; the others do not touch it.
func TestMain(m *testing.M) {
	testenv.Main(m, func(o *testenv.Options) { o.WithoutNode = true })
}
