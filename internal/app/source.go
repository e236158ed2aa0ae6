package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/weir-gitops/weir/internal/runtime/httpserve"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/controller/bucket"
	"github.com/weir-gitops/weir/internal/source/controller/gitrepository"
	"github.com/weir-gitops/weir/internal/source/controller/helmchart"
	"github.com/weir-gitops/weir/internal/source/controller/helmrepository"
	"github.com/weir-gitops/weir/internal/source/controller/ocirepository"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

// sourceConcurrency is Flux's source-controller --concurrent default.
const sourceConcurrency = 2

// sourceDeps is what the controllers that write artifacts share: the
// storage (opened once per process), an event recorder reporting as
// manager, the retention and jitter flags. concurrency is --concurrent,
// else the controller's own default.
func (d *Deps) sourceDeps(manager string, defaultConcurrency int) (_ source.Deps, concurrency int, _ error) {
	opts := d.Options
	storage, err := d.artifactStorage()
	if err != nil {
		return source.Deps{}, 0, err
	}
	mgr := d.Manager
	recorder := events.NewRecorder(mgr.GetEventRecorderFor(manager), mgr.GetScheme(), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
		manager, os.Getenv("POD_NAME"), opts.EventsAddr)
	concurrency = opts.Concurrent
	if concurrency == 0 {
		concurrency = defaultConcurrency
	}
	return source.Deps{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Storage:          storage,
		Events:           recorder,
		Metrics:          d.Metrics,
		RetentionTTL:     opts.ArtifactRetentionTTL,
		RetentionRecords: opts.ArtifactRetentionRecords,
		Jitter:           opts.IntervalJitter,
	}, concurrency, nil
}

func setupSource(_ context.Context, deps *Deps) error {
	opts := deps.Options
	mgr := deps.Manager
	common, concurrency, err := deps.sourceDeps(meta.SourceControllerManager, sourceConcurrency)
	if err != nil {
		return err
	}
	common.Helm = helmDeps(opts)
	common.Auth = deps.authSettings(opts.DefaultServiceAccount)
	if c := common.Helm.Cache; c != nil {
		if err := mgr.Add(c); err != nil {
			return fmt.Errorf("adding the Helm index cache purger: %w", err)
		}
	}
	queue := reconcile.SetupOptions{
		Shard:                   deps.sharder(),
		MaxConcurrentReconciles: concurrency,
		MinRetryDelay:           opts.MinRetryDelay,
		MaxRetryDelay:           opts.MaxRetryDelay,
	}
	reconcilers := []struct {
		kind  string
		setup func(ctrl.Manager, reconcile.SetupOptions) error
	}{
		{sourcev1.GitRepositoryKind, (&gitrepository.Reconciler{Deps: common}).SetupWithManager},
		{sourcev1.OCIRepositoryKind, (&ocirepository.Reconciler{Deps: common}).SetupWithManager},
		{sourcev1.BucketKind, (&bucket.Reconciler{Deps: common}).SetupWithManager},
		{sourcev1.HelmChartKind, (&helmchart.Reconciler{Deps: common}).SetupWithManager},
		{sourcev1.HelmRepositoryKind, (&helmrepository.Reconciler{Deps: common}).SetupWithManager},
	}
	for _, r := range reconcilers {
		if err := r.setup(mgr, queue); err != nil {
			return fmt.Errorf("%s: %w", r.kind, err)
		}
	}
	return nil
}

// artifactStorage opens the artifact storage and starts its file server,
// once per process.
func (d *Deps) artifactStorage() (*artifact.Storage, error) {
	if d.storage != nil {
		return d.storage, nil
	}
	opts := d.Options
	adv, err := advertisedAddr(opts.StorageAddr, opts.StorageAdvAddr)
	if err != nil {
		return nil, err
	}
	storage, err := artifact.NewStorage(opts.StoragePath, adv, artifact.Options{
		DigestAlgorithm: artifact.Algorithm(opts.ArtifactDigestAlgo),
	})
	if err != nil {
		return nil, fmt.Errorf("opening artifact storage: %w", err)
	}
	if err := d.Manager.Add(fileServer(opts.StorageAddr, artifact.NewServer(storage).Handler())); err != nil {
		return nil, err
	}
	d.storage = storage
	return storage, nil
}

// helmDeps turns the --helm-* flags into what the Helm reconcilers share;
// one index cache serves both.
func helmDeps(opts *Options) source.Helm {
	return source.Helm{
		Limits:           helmrepo.Limits{MaxIndexSize: opts.HelmIndexMaxSize, MaxChartSize: opts.HelmChartMaxSize},
		MaxChartFileSize: opts.HelmChartFileMaxSize,
		Cache: helmrepo.NewCache(helmrepo.CacheOptions{
			MaxSize: opts.HelmCacheMaxSize, TTL: opts.HelmCacheTTL, PurgeInterval: opts.HelmCachePurgeInterval,
		}),
	}
}

// advertisedAddr is --storage-adv-addr, or the storage address with this
// host's name when only a port is given (":9090").
func advertisedAddr(storageAddr, adv string) (string, error) {
	if adv != "" {
		return adv, nil
	}
	host, port, err := net.SplitHostPort(storageAddr)
	if err != nil {
		return "", fmt.Errorf("parsing --storage-addr %q: %w", storageAddr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		if host, err = os.Hostname(); err != nil {
			return "", fmt.Errorf("finding hostname for --storage-adv-addr: %w", err)
		}
	}
	return net.JoinHostPort(host, port), nil
}

// fileServer serves artifacts on every replica, leader or not: downstream
// controllers fetch from the Service, whichever pod answers.
func fileServer(addr string, h http.Handler) manager.Runnable {
	return nonLeaderRunnable(func(ctx context.Context) error {
		// Artifacts can be large and links slow: no deadline beyond the
		// request headers'.
		return httpserve.Serve(ctx, "artifact server", addr, h, ctrl.Log.WithName("storage"),
			httpserve.Options{ReadTimeout: -1, WriteTimeout: -1})
	})
}

type nonLeaderRunnable func(context.Context) error

func (r nonLeaderRunnable) Start(ctx context.Context) error { return r(ctx) }
func (r nonLeaderRunnable) NeedLeaderElection() bool        { return false }
