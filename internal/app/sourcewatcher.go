package app

import (
	"context"
	"fmt"
	"os"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
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
	storage, err := deps.artifactStorage()
	if err != nil {
		return err
	}
	mgr := deps.Manager
	recorder := events.NewRecorder(mgr.GetEventRecorderFor(meta.SourceWatcherManager), mgr.GetScheme(), //nolint:staticcheck // SA1019: see setupSource
		meta.SourceWatcherManager, os.Getenv("POD_NAME"), opts.EventsAddr)
	r := &artifactgenerator.Reconciler{
		Deps: source.Deps{
			Client:           mgr.GetClient(),
			APIReader:        mgr.GetAPIReader(),
			Storage:          storage,
			Events:           recorder,
			Metrics:          deps.Metrics,
			RetentionTTL:     opts.ArtifactRetentionTTL,
			RetentionRecords: opts.ArtifactRetentionRecords,
			Jitter:           opts.IntervalJitter,
		},
		Fetcher:              &artifact.Fetcher{Retries: opts.HTTPRetry},
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs,
		RequeueDependency:    opts.RequeueDependency,
	}
	concurrency := opts.Concurrent
	if concurrency == 0 {
		concurrency = sourceWatcherConcurrency
	}
	if err := r.SetupWithManager(mgr, reconcile.SetupOptions{
		MaxConcurrentReconciles: concurrency,
		MinRetryDelay:           opts.MinRetryDelay,
		MaxRetryDelay:           opts.MaxRetryDelay,
	}); err != nil {
		return fmt.Errorf("ArtifactGenerator: %w", err)
	}
	return nil
}
