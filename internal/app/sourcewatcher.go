package app

import (
	"context"
	"fmt"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/controller/artifactgenerator"
)

// sourceWatcherConcurrency is Flux's source-watcher --concurrent default.
const sourceWatcherConcurrency = 10

// setupSourceWatcher runs the ArtifactGenerator controller, Flux's
// source-watcher. Beside the source controller it shares its storage and
// file server; alone (the split layout's source-watcher Deployment) it
// opens its own from the same --storage-* flags.
func setupSourceWatcher(_ context.Context, deps *Deps) error {
	opts := deps.Options
	common, concurrency, err := deps.sourceDeps(meta.SourceWatcherManager, sourceWatcherConcurrency)
	if err != nil {
		return err
	}
	mgr := deps.Manager
	r := &artifactgenerator.Reconciler{
		Deps:                 common,
		Fetcher:              &artifact.Fetcher{Retries: opts.HTTPRetry},
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs,
		RequeueDependency:    opts.RequeueDependency,
	}
	if err := r.SetupWithManager(mgr, reconcile.SetupOptions{
		Shard:                   deps.sharder(),
		MaxConcurrentReconciles: concurrency,
		MinRetryDelay:           opts.MinRetryDelay,
		MaxRetryDelay:           opts.MaxRetryDelay,
	}); err != nil {
		return fmt.Errorf("ArtifactGenerator: %w", err)
	}
	return nil
}
