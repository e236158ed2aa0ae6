// Package controllers runs weir's controllers inside a test process, through
// internal/app as weir-controller does, standing in for the controller pods
// that kwok only pretends to run. Tests of the CLI (install, bootstrap, the
// day-to-day verbs) need controllers that really reconcile, and this is the
// one place that knows how to start them for a test: free ports, temporary
// storage, quick retries, and a process that may start them more than once.
//
// It lives beside testenv rather than in it because internal/app imports the
// controller packages, whose own in-package tests import testenv: testenv
// importing app would close a cycle.
//
// In TestMain, for the whole package:
//
//	testenv.Main(m, func(o *testenv.Options) {
//		o.Setup = func(ctx context.Context, env *testenv.Env) error {
//			_, err := controllers.Start(ctx, env, controllers.Options{Controllers: []string{"source", "kustomize"}})
//			return err
//		}
//	})
//
// In one test, for as long as flux-system/kustomize-controller exists:
//
//	controllers.Run(t, controllers.Options{
//		Controllers: []string{"kustomize"},
//		Deployment:  client.ObjectKey{Namespace: "flux-system", Name: "kustomize-controller"},
//	})
package controllers
