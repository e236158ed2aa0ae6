package app

import (
	"context"
	"os"

	"github.com/weir-gitops/weir/internal/apply/restconfig"
	"github.com/weir-gitops/weir/internal/helm/controller/helmrelease"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// helmConcurrency is Flux's helm-controller --concurrent default.
const helmConcurrency = 4

func setupHelm(ctx context.Context, deps *Deps) error {
	opts, mgr := deps.Options, deps.Manager
	gates := opts.FeatureGates
	configs, err := configsSelector(opts)
	if err != nil {
		return err
	}
	concurrency := opts.Concurrent
	if concurrency == 0 {
		concurrency = helmConcurrency
	}
	r := &helmrelease.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Config:    mgr.GetConfig(),
		Clusters: &restconfig.Resolver{
			Config: mgr.GetConfig(), Reader: mgr.GetAPIReader(),
			DefaultServiceAccount:  opts.DefaultServiceAccount,
			InsecureKubeConfigExec: opts.InsecureKubeConfigExec,
			InsecureKubeConfigTLS:  opts.InsecureKubeConfigTLS,
			KubeConfigIdentity:     deps.authSettings(opts.FluxOnly.DefaultKubeConfigSA),
			RemoteWrap:             deps.remoteFence(),
		},
		Events: events.NewRecorder(mgr.GetEventRecorderFor(helmrelease.ControllerName), mgr.GetScheme(), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
			helmrelease.ControllerName, os.Getenv("POD_NAME"), opts.EventsAddr),
		Metrics: deps.Metrics,
		Fetcher: &artifact.Fetcher{Retries: opts.HTTPRetry},
		Options: helmrelease.Options{
			RequeueDependency:          opts.RequeueDependency,
			NoCrossNamespaceRefs:       opts.NoCrossNamespaceRefs,
			Jitter:                     opts.IntervalJitter,
			AllowExternalArtifact:      gates["ExternalArtifact"],
			AdditiveCELDependencyCheck: gates["AdditiveCELDependencyCheck"],
			ConfigsSelector:            configsUnlessDisabled(configs, gates),
			UseHelm3Defaults:           gates["UseHelm3Defaults"],
			AllowDNSLookups:            gates["AllowDNSLookups"],
			DefaultToRetryOnFailure:    gates["DefaultToRetryOnFailure"],
			DisableChartDigestTracking: gates["DisableChartDigestTracking"],
		},
	}
	if err := r.WatchHealth(mgr); err != nil {
		return err
	}
	return r.SetupWithManager(ctx, mgr, reconcile.SetupOptions{
		Shard:                   deps.sharder(),
		MaxConcurrentReconciles: concurrency,
		MinRetryDelay:           opts.MinRetryDelay,
		MaxRetryDelay:           opts.MaxRetryDelay,
	})
}
