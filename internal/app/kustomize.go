package app

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/weir-gitops/weir/internal/kustomize/controller/kustomization"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// kustomizeConcurrency is Flux's kustomize-controller --concurrent default.
const kustomizeConcurrency = 4

func setupKustomize(ctx context.Context, deps *Deps) error {
	opts, mgr := deps.Options, deps.Manager
	stages, err := parseGroupKinds(opts.CustomApplyStageKinds)
	if err != nil {
		return err
	}
	gates := opts.FeatureGates
	configs, err := configsSelector(opts)
	if err != nil {
		return err
	}
	concurrency := opts.Concurrent
	if concurrency == 0 {
		concurrency = kustomizeConcurrency
	}
	r := &kustomization.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Clients: &kustomization.ClientFactory{
			Config: mgr.GetConfig(), Mapper: mgr.GetRESTMapper(), Scheme: mgr.GetScheme(), Reader: mgr.GetAPIReader(),
			DefaultServiceAccount:  opts.DefaultServiceAccount,
			InsecureKubeConfigExec: opts.InsecureKubeConfigExec,
			InsecureKubeConfigTLS:  opts.InsecureKubeConfigTLS,
			KubeConfigIdentity:     deps.authSettings(opts.FluxOnly.DefaultKubeConfigSA),
			RemoteWrap:             deps.remoteFence(),
		},
		Events: events.NewRecorder(mgr.GetEventRecorderFor(kustomization.ControllerName), mgr.GetScheme(), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
			kustomization.ControllerName, os.Getenv("POD_NAME"), opts.EventsAddr),
		Metrics:  deps.Metrics,
		Fetcher:  &artifact.Fetcher{Retries: opts.HTTPRetry},
		Identity: deps.authSettings(opts.FluxOnly.DefaultDecryptionSA),
		Options: kustomization.Options{
			RequeueDependency:          opts.RequeueDependency,
			NoCrossNamespaceRefs:       opts.NoCrossNamespaceRefs,
			NoRemoteBases:              opts.NoRemoteBases,
			ConcurrentSSA:              opts.ConcurrentSSA,
			Jitter:                     opts.IntervalJitter,
			OverrideManagers:           opts.OverrideManagers,
			CustomStageKinds:           stages,
			AllowExternalArtifact:      gates["ExternalArtifact"],
			AdditiveCELDependencyCheck: gates["AdditiveCELDependencyCheck"],
			AllowUndefinedVariables:    gateOff(gates, "StrictPostBuildSubstitutions"),
			DisableFailFast:            gates["DisableFailFastBehavior"],
			ConfigsSelector:            configsUnlessDisabled(configs, gates),
			FollowProducedConfigs:      followConfigs(gates),
			WatchNamespace:             watchNamespace(opts),
			MemoNamespace:              os.Getenv("RUNTIME_NAMESPACE"),
			MemoName:                   memoName(opts),
			SOPSAgeSecret:              inControllerNamespace(opts.FluxOnly.SOPSAgeSecret),
			SOPSVaultConfigMap:         inControllerNamespace(opts.FluxOnly.SOPSVaultConfigMap),
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

// inControllerNamespace is an object a flag names in the controller's
// namespace (--sops-age-secret, --sops-vault-configmap), nil when unset.
func inControllerNamespace(name string) *types.NamespacedName {
	if name == "" {
		return nil
	}
	return &types.NamespacedName{Namespace: os.Getenv("RUNTIME_NAMESPACE"), Name: name}
}

// watchNamespace is the one namespace the controllers watch with
// --watch-all-namespaces=false, or empty for all.
func watchNamespace(opts *Options) string {
	if opts.WatchAllNamespaces {
		return ""
	}
	return os.Getenv("RUNTIME_NAMESPACE")
}

// configsSelector parses --watch-configs-label-selector; nil when empty.
func configsSelector(opts *Options) (labels.Selector, error) {
	if opts.WatchConfigsLabelSelector == "" {
		return nil, nil
	}
	sel, err := labels.Parse(opts.WatchConfigsLabelSelector)
	if err != nil {
		return nil, fmt.Errorf("parsing --watch-configs-label-selector: %w", err)
	}
	return sel, nil
}

// configsUnlessDisabled is the config watch selector, unless the
// DisableConfigWatchers gate turns the watches off. The gate turns off
// the substitution followers too (FollowProducedConfigs): both are watches
// on ConfigMaps and Secrets, and the gate is how an operator says the
// controller must watch none.
func configsUnlessDisabled(sel labels.Selector, gates map[string]bool) labels.Selector {
	if gates["DisableConfigWatchers"] {
		return nil
	}
	return sel
}

// followConfigs reports whether the substitution followers run: unless
// DisableConfigWatchers is on (see configsUnlessDisabled).
func followConfigs(gates map[string]bool) bool { return !gates["DisableConfigWatchers"] }

// gateOff reports whether a gate that defaults to on was turned off.
func gateOff(gates map[string]bool, name string) bool {
	on, set := gates[name]
	return set && !on
}

// memoName names the Secrets that keep the apply memo across restarts,
// one set per controller set and shard. With --shard-mode=auto every
// replica is active, and one set written by all would lose each other's
// memos: the memo is then kept in memory only (a restarted replica applies
// its share once in full).
func memoName(opts *Options) string {
	if opts.autoSharding() {
		return ""
	}
	return leaderElectionID(*opts) + "-apply-memo"
}
