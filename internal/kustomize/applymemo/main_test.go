package applymemo

import (
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// The store's tests keep memos in Secrets of a real API server and list
// real Kustomizations; no node and no controller.
func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }
