package app

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/kustomize/controller/kustomization"
	"github.com/weir-gitops/weir/internal/runtime/intern"
	"github.com/weir-gitops/weir/internal/runtime/lazylog"
	"github.com/weir-gitops/weir/internal/runtime/metrics"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/runtime/shard"
	"github.com/weir-gitops/weir/internal/scheme"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Deps is what every controller's setup receives from the assembly.
type Deps struct {
	Manager manager.Manager
	Options *Options
	Metrics *metrics.Recorder
	// Selected are the controllers this process runs.
	Selected []string
	// storage is the artifact storage and its server, opened by the first
	// controller that needs it (source, source-watcher) and shared by the
	// other in the same process, as one file server.
	storage *artifact.Storage

	// tokens is the cloud token cache every controller of the process
	// shares (--token-cache-max-size, --token-cache-max-duration): its keys
	// name the cloud and the identity, so sharing loses nothing.
	tokens     *auth.Cache
	tokensOnce sync.Once

	// shard is this replica's membership with --shard-mode=auto.
	shard *shard.Member
}

// sharder is what each controller's queue gates its reconciles with: nil
// unless --shard-mode=auto.
func (d *Deps) sharder() reconcile.Sharder {
	if d.shard == nil {
		return nil
	}
	return d.shard
}

// remoteFence wraps the transport of spec.kubeConfig clusters: the
// membership's fence with --shard-mode=auto, so remote writes stop with
// the Lease as local ones do; nil otherwise.
func (d *Deps) remoteFence() func(http.RoundTripper) http.RoundTripper {
	if d.shard == nil {
		return nil
	}
	return d.shard.Fence
}

// authSettings is the identity settings of a controller whose lockdown
// default ServiceAccount is defaultSA (--default-service-account for
// sources, image and notification controllers; the kustomize and helm
// controllers pass their decryption or kubeconfig default).
func (d *Deps) authSettings(defaultSA string) *auth.Settings {
	d.tokensOnce.Do(func() {
		d.tokens = auth.NewCache(d.Options.FluxOnly.TokenCacheMaxSize, d.Options.FluxOnly.TokenCacheMaxDuration)
	})
	return &auth.Settings{
		ObjectLevel:           d.Options.FeatureGates[auth.FeatureGate],
		DefaultServiceAccount: defaultSA,
		Client:                d.Manager.GetClient(),
		Reader:                d.Manager.GetAPIReader(),
		Cache:                 d.tokens,
	}
}

// runs reports whether this process runs the named controller.
func (d *Deps) runs(name string) bool { return contains(d.Selected, name) }

// Run starts the selected controllers against the cluster cfg points at and
// blocks until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	selected, err := opts.Selected()
	if err != nil {
		return err
	}
	ctrl.SetLogger(lazylog.Wrap(newLogger(opts)))
	log := ctrl.Log.WithName("setup")

	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.KubeAPIQPS, opts.KubeAPIBurst
	cfg.UserAgent = "weir-controller"

	member, err := joinShards(cfg, &opts, log)
	if err != nil {
		return err
	}
	mgr, err := newManager(cfg, opts, selected)
	if err != nil {
		return err
	}
	deps := &Deps{Manager: mgr, Options: &opts, Metrics: metrics.NewRecorder(nil), Selected: selected}
	if member != nil {
		if err := mgr.Add(member); err != nil {
			return fmt.Errorf("adding the sharding membership: %w", err)
		}
		deps.shard = member
	}
	for _, c := range registry {
		if !contains(selected, c.name) {
			continue
		}
		if err := c.setup(ctx, deps); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", c.name, err)
		}
		log.Info("controller enabled", "controller", c.name)
	}
	log.Info("starting manager", "controllers", strings.Join(selected, ","))
	return mgr.Start(ctx)
}

func newManager(cfg *rest.Config, opts Options, selected []string) (manager.Manager, error) {
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	cacheOpts := cache.Options{DefaultTransform: cacheTransform(cache.TransformStripManagedFields())}
	if !opts.WatchAllNamespaces {
		ns := os.Getenv("RUNTIME_NAMESPACE")
		if ns == "" {
			return nil, fmt.Errorf("--watch-all-namespaces=false needs the RUNTIME_NAMESPACE environment variable")
		}
		cacheOpts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	if opts.WatchLabelSelector != "" {
		sel, err := labels.Parse(opts.WatchLabelSelector)
		if err != nil {
			return nil, fmt.Errorf("parsing --watch-label-selector: %w", err)
		}
		cacheOpts.DefaultLabelSelector = sel
	}
	configs, err := configsSelector(&opts)
	if err != nil {
		return nil, err
	}
	if configs != nil {
		sel := configs
		// Only the labelled ConfigMaps and Secrets are cached (for the
		// watches that follow them); every other read of them goes to the
		// API server, so credentials are not held cluster-wide.
		cacheOpts.ByObject = map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Label: sel},
			&corev1.Secret{}:    {Label: sel},
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 s,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: opts.MetricsAddr, ExtraHandlers: profileHandlers()},
		HealthProbeBindAddress: opts.HealthAddr,
		LeaderElection:         opts.EnableLeaderElection,
		LeaderElectionID:       leaderElectionID(opts),
		// Flux's manifests set RUNTIME_NAMESPACE from the Pod's namespace;
		// out of a cluster it is the only way to say where the Lease lives
		// (empty: controller-runtime reads the in-cluster namespace file).
		LeaderElectionNamespace:       os.Getenv("RUNTIME_NAMESPACE"),
		LeaseDuration:                 &opts.LeaseDuration,
		RenewDeadline:                 &opts.RenewDeadline,
		RetryPeriod:                   &opts.RetryPeriod,
		LeaderElectionReleaseOnCancel: opts.LeaderElectionReleaseOnCancel,
		Client:                        client.Options{Cache: &client.CacheOptions{Unstructured: false}},
		NewClient:                     newClient(opts.WatchLabelSelector),
		Controller:                    config.Controller{SkipNameValidation: &opts.SkipNameValidation},
		GracefulShutdownTimeout:       gracefulShutdown(opts, selected),
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding ready check: %w", err)
	}
	return mgr, nil
}

// cacheTransform is what the manager's cache does to every object before
// storing it. No controller reads managedFields from the cache (internal/apply/ssa
// reads them uncached, where it needs them), and they are a large part of
// every cached Kustomization, source and release: strip drops them. The
// strings a fleet repeats (namespace, finalizers, conditions, and a
// Kustomization's source, revisions and history) are then interned, so
// that 10,000 objects share one copy of each (internal/runtime/intern).
func cacheTransform(strip toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		out, err := strip(in)
		if err != nil {
			return out, err
		}
		internStrings(intern.Default, out)
		return out, nil
	}
}

func internStrings(t *intern.Table, obj any) {
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			t.ObjectMeta(m)
		}
	}
	if c, ok := obj.(meta.ObjectWithConditions); ok {
		t.Conditions(c.GetConditions())
	}
	if k, ok := obj.(*kustomizev1.Kustomization); ok {
		kustomization.InternStrings(t, k)
	}
}

// gracefulShutdown is how long the manager lets running reconciles finish
// after a shutdown signal: --graceful-shutdown-timeout (Flux's
// helm-controller flag, 600s, matched by the pod's
// terminationGracePeriodSeconds) when this process runs the helm
// controller, whose Helm actions left half-done leave a release pending;
// controller-runtime's default otherwise.
func gracefulShutdown(opts Options, selected []string) *time.Duration {
	if !contains(selected, "helm") {
		return nil
	}
	d := opts.GracefulShutdownTimeout
	return &d
}

// leaderElectionID is unique per controller set and shard, so split
// deployments and shards elect their leaders independently.
func leaderElectionID(opts Options) string {
	id := "weir-" + strings.Join(opts.Controllers, "-")
	if opts.WatchLabelSelector != "" {
		id += "-" + fmt.Sprintf("%x", hash(opts.WatchLabelSelector))
	}
	id = strings.NewReplacer("*", "all", ",", "-", "=", "-", "!", "not").Replace(id)
	if len(id) > 63 {
		id = id[:63]
	}
	return strings.Trim(id, "-")
}

func hash(s string) uint32 {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func newLogger(opts Options) logr.Logger {
	level := zapcore.InfoLevel
	switch opts.LogLevel {
	case "debug":
		level = zapcore.DebugLevel
	case "error":
		level = zapcore.ErrorLevel
	case "trace":
		level = zapcore.Level(-2)
	}
	encoder := zap.JSONEncoder(func(c *zapcore.EncoderConfig) {
		c.TimeKey, c.EncodeTime = "ts", zapcore.ISO8601TimeEncoder
	})
	if opts.LogEncoding == "console" {
		encoder = zap.ConsoleEncoder()
	}
	if opts.LogOutput != nil {
		return zap.New(zap.Level(level), encoder, zap.WriteTo(opts.LogOutput))
	}
	return zap.New(zap.Level(level), encoder)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
