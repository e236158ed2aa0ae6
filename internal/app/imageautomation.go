package app

import (
	"context"
	"os"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/image/controller/imageupdateautomation"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// imageAutomationConcurrency is Flux's image-automation-controller
// --concurrent default.
const imageAutomationConcurrency = 4

// imageAutomationGateDefaults are the image-automation-controller gates
// that are on unless --feature-gates turns them off. weir acts on
// GitForcePushBranch; GitShallowClone and GitAllBranchReferences change
// nothing (the in-memory checkout fetches the branch's whole history, which
// the fast-forward check of a push needs), nor do GitSparseCheckout (off)
// and CacheSecretsAndConfigMaps (off; Secrets are read uncached).
var imageAutomationGateDefaults = map[string]bool{
	"GitForcePushBranch":     true,
	"GitShallowClone":        true,
	"GitAllBranchReferences": true,
}

// gateOn reads a gate, falling back to its default.
func gateOn(gates map[string]bool, defaults map[string]bool, name string) bool {
	if v, ok := gates[name]; ok {
		return v
	}
	return defaults[name]
}

// setupImageAutomation runs the ImageUpdateAutomation reconciler,
// Flux's image-automation-controller.
func setupImageAutomation(ctx context.Context, deps *Deps) error {
	opts, mgr := deps.Options, deps.Manager
	concurrency := opts.Concurrent
	if concurrency == 0 {
		concurrency = imageAutomationConcurrency
	}
	r := &imageupdateautomation.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Events: events.NewRecorder(mgr.GetEventRecorderFor(meta.ImageAutomationManager), mgr.GetScheme(), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
			meta.ImageAutomationManager, os.Getenv("POD_NAME"), opts.EventsAddr),
		Metrics:              deps.Metrics,
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs,
		Auth:                 deps.authSettings(opts.DefaultServiceAccount),
		ForcePushBranch:      gateOn(opts.FeatureGates, imageAutomationGateDefaults, "GitForcePushBranch"),
		Jitter:               opts.IntervalJitter,
	}
	return r.SetupWithManager(ctx, mgr, reconcile.SetupOptions{
		Shard:                   deps.sharder(),
		MaxConcurrentReconciles: concurrency,
		MinRetryDelay:           opts.MinRetryDelay,
		MaxRetryDelay:           opts.MaxRetryDelay,
	})
}
