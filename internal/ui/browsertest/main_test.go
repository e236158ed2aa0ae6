package browsertest

import (
	"context"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
)

// The tests share one control plane with weir's source and kustomize
// controllers running in-process, as weir-controller runs them; each test
// builds its fleet in a namespace of its own and filters the UI to it.
func TestMain(m *testing.M) {
	testenv.Main(m, func(o *testenv.Options) {
		o.Setup = func(ctx context.Context, env *testenv.Env) error {
			_, err := controllers.Start(ctx, env, controllers.Options{Controllers: []string{"source", "kustomize"}})
			return err
		}
	})
}
