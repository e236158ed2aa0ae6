package livediff_test

import (
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// The integration tests run against the API server alone; a test that
// needs weir's controllers runs them itself (controllers.Run).
func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }
