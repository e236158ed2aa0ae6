package app

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

// Options are weir-controller's flags. Names and defaults are Flux's, so
// manifests and patches written for Flux's controllers apply unchanged.
type Options struct {
	Controllers []string

	MetricsAddr string
	HealthAddr  string
	EventsAddr  string
	// ReceiverAddr is where the notification controller serves Receiver
	// webhooks; "0" turns the server off.
	ReceiverAddr string
	// EventsListenAddr is where the notification controller takes the
	// controllers' events. Empty means --events-addr when the notification
	// controller runs alone (Flux's notification-controller listens on
	// --events-addr), else :9090, or :9091 when the source controller's
	// artifact server runs in the same process; "0" turns it off.
	EventsListenAddr string
	// RateLimitInterval forwards an identical event once per interval.
	RateLimitInterval time.Duration

	Concurrent        int
	RequeueDependency time.Duration
	MinRetryDelay     time.Duration
	MaxRetryDelay     time.Duration
	IntervalJitter    float64

	LogLevel    string
	LogEncoding string

	EnableLeaderElection bool
	LeaseDuration        time.Duration
	RenewDeadline        time.Duration
	RetryPeriod          time.Duration

	KubeAPIQPS   float32
	KubeAPIBurst int

	WatchAllNamespaces        bool
	WatchLabelSelector        string
	WatchConfigsLabelSelector string
	FeatureGates              map[string]bool

	NoCrossNamespaceRefs  bool
	DefaultServiceAccount string

	// GracefulShutdownTimeout is helm-controller's
	// --graceful-shutdown-timeout (see gracefulShutdown).
	GracefulShutdownTimeout time.Duration

	// kustomize-controller.
	ConcurrentSSA          int
	NoRemoteBases          bool
	HTTPRetry              int
	OverrideManagers       []string
	CustomApplyStageKinds  []string
	InsecureKubeConfigExec bool
	InsecureKubeConfigTLS  bool

	StoragePath              string
	StorageAddr              string
	StorageAdvAddr           string
	ArtifactRetentionTTL     time.Duration
	ArtifactRetentionRecords int
	ArtifactDigestAlgo       string

	// source-controller's Helm flags.
	HelmIndexMaxSize       int64
	HelmChartMaxSize       int64
	HelmChartFileMaxSize   int64
	HelmCacheMaxSize       int
	HelmCacheTTL           time.Duration
	HelmCachePurgeInterval time.Duration
	// ImageReflector are image-reflector-controller's flags.
	ImageReflector ImageReflectorOptions
	// FluxOnly are Flux's flags weir accepts but does not use yet.
	FluxOnly FluxOnlyFlags
	// LeaderElectionReleaseOnCancel gives the lease up at shutdown, so the
	// next replica takes over at once.
	LeaderElectionReleaseOnCancel bool
	// ShardMode is "off" (Flux's layout: one active replica, or label
	// shards) or "auto": every replica is active and reconciles its share
	// (internal/runtime/shard). Auto takes precedence over
	// --enable-leader-election.
	ShardMode string
	// ShardGroup names the replicas that share the fleet in auto mode;
	// empty is the leader election ID (one group per controller set and
	// label shard).
	ShardGroup string

	// LogOutput receives the logs instead of stderr (weir dev writes them to
	// a file); not a flag.
	LogOutput io.Writer
	// UIAddr is where --controllers=ui serves the web UI.
	UIAddr string
	// UISecureCookies marks the UI's session cookie Secure, behind a
	// TLS-terminating Ingress.
	UISecureCookies bool
	// UIAssets are the UI's browser files; nil means internal/ui/web's.
	// Not a flag.
	UIAssets fs.FS

	// SkipNameValidation lets the controllers start again in a process where
	// they ran before: controller-runtime refuses a controller name it has
	// seen, process-wide. weir dev's tests run it twice; not a flag.
	SkipNameValidation bool
}

// DefaultOptions returns Flux's defaults.
func DefaultOptions() Options {
	return Options{
		Controllers:               []string{"*"},
		MetricsAddr:               ":8080",
		HealthAddr:                ":9440",
		ReceiverAddr:              ":9292",
		UIAddr:                    ":9080",
		RateLimitInterval:         5 * time.Minute,
		RequeueDependency:         30 * time.Second,
		GracefulShutdownTimeout:   600 * time.Second,
		MinRetryDelay:             750 * time.Millisecond,
		MaxRetryDelay:             15 * time.Minute,
		LogLevel:                  "info",
		LogEncoding:               "json",
		LeaseDuration:             35 * time.Second,
		RenewDeadline:             30 * time.Second,
		RetryPeriod:               5 * time.Second,
		KubeAPIQPS:                50,
		KubeAPIBurst:              300,
		WatchAllNamespaces:        true,
		WatchConfigsLabelSelector: "reconcile.fluxcd.io/watch=Enabled",
		ConcurrentSSA:             4,
		HTTPRetry:                 9,
		StoragePath:               envOr("STORAGE_PATH", "/data"),
		StorageAddr:               ":9090",
		ArtifactRetentionTTL:      time.Minute,
		ArtifactRetentionRecords:  2,
		ArtifactDigestAlgo:        "sha256",
		HelmIndexMaxSize:          helmrepo.DefaultMaxIndexSize,
		HelmChartMaxSize:          helmrepo.DefaultMaxChartSize,
		HelmChartFileMaxSize:      helmrepo.DefaultMaxChartFileSize,
		HelmCacheTTL:              helmrepo.DefaultCacheTTL,
		HelmCachePurgeInterval:    helmrepo.DefaultCachePurgeInterval,
		FluxOnly:                  defaultFluxOnlyFlags(),
		ImageReflector:            defaultImageReflectorOptions(),

		LeaderElectionReleaseOnCancel: true,
		ShardMode:                     "off",
	}
}

// AddFlags registers every flag on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers,
		"controllers to run: * for all but ui, names to pick ("+strings.Join(AllControllers(), ",")+"), -name to leave one out")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "address the metric endpoint binds to")
	fs.StringVar(&o.HealthAddr, "health-addr", o.HealthAddr, "address the health endpoint binds to")
	fs.StringVar(&o.EventsAddr, "events-addr", o.EventsAddr, "URL of the notification controller events are sent to (empty: Kubernetes Events only); "+
		"with --controllers=notification alone, the address it takes events on (default :9090), as Flux's notification-controller")
	fs.StringVar(&o.ReceiverAddr, "receiverAddr", o.ReceiverAddr, "address the Receiver webhook server binds to (notification controller); 0 turns it off")
	fs.StringVar(&o.EventsListenAddr, "events-listen-addr", o.EventsListenAddr, "address the notification controller takes events on, beside other controllers (default :9090, :9091 beside the source controller); 0 turns it off")
	fs.DurationVar(&o.RateLimitInterval, "rate-limit-interval", o.RateLimitInterval, "interval in which an identical event is forwarded once")
	fs.IntVar(&o.Concurrent, "concurrent", o.Concurrent, "number of concurrent reconciles per controller (0: each controller's Flux default)")
	fs.DurationVar(&o.RequeueDependency, "requeue-dependency", o.RequeueDependency, "safety-net interval to re-check dependencies that are not ready")
	fs.DurationVar(&o.MinRetryDelay, "min-retry-delay", o.MinRetryDelay, "first retry delay after a failure")
	fs.DurationVar(&o.MaxRetryDelay, "max-retry-delay", o.MaxRetryDelay, "longest retry delay after repeated failures")
	fs.Float64Var(&o.IntervalJitter, "interval-jitter-percentage", o.IntervalJitter, "percentage of jitter added to spec.interval")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "log verbosity: debug, info, error")
	fs.StringVar(&o.LogEncoding, "log-encoding", o.LogEncoding, "log encoding: json or console")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "queries per second to the Kubernetes API")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "burst of queries to the Kubernetes API")
	fs.BoolVar(&o.WatchAllNamespaces, "watch-all-namespaces", o.WatchAllNamespaces, "watch every namespace; false watches only the runtime namespace")
	fs.StringVar(&o.WatchLabelSelector, "watch-label-selector", o.WatchLabelSelector, "reconcile only objects matching this label selector (sharding)")
	fs.StringVar(&o.WatchConfigsLabelSelector, "watch-configs-label-selector", o.WatchConfigsLabelSelector, "Secrets and ConfigMaps whose changes trigger reconciles of objects that use them")
	fs.Var(featureGates(&o.FeatureGates), "feature-gates", "feature gates: A=true,B=false (values as strconv.ParseBool reads them, as Flux does)")
	fs.BoolVar(&o.NoCrossNamespaceRefs, "no-cross-namespace-refs", o.NoCrossNamespaceRefs, "refuse references to objects in other namespaces")
	fs.StringVar(&o.DefaultServiceAccount, "default-service-account", o.DefaultServiceAccount, "service account to impersonate when an object names none")
	fs.DurationVar(&o.GracefulShutdownTimeout, "graceful-shutdown-timeout", o.GracefulShutdownTimeout,
		"how long running reconciles (Helm actions) may finish after a shutdown signal, when the helm controller runs")
	fs.IntVar(&o.ConcurrentSSA, "concurrent-ssa", o.ConcurrentSSA, "server-side apply requests a Kustomization runs at once")
	fs.BoolVar(&o.NoRemoteBases, "no-remote-bases", o.NoRemoteBases, "refuse kustomize remote bases and URLs: builds read only the source artifact")
	fs.IntVar(&o.HTTPRetry, "http-retry", o.HTTPRetry, "retries of a failed artifact download")
	fs.StringSliceVar(&o.OverrideManagers, "override-manager", o.OverrideManagers, "field managers whose fields server-side apply takes over")
	fs.StringSliceVar(&o.CustomApplyStageKinds, "custom-apply-stage-kinds", o.CustomApplyStageKinds, "comma-separated GroupKinds (group/Kind, e.g. rbac.authorization.k8s.io/Role; Kind for the core group) applied in a stage of their own, after CRDs and classes, before the rest")
	fs.BoolVar(&o.InsecureKubeConfigExec, "insecure-kubeconfig-exec", o.InsecureKubeConfigExec, "allow exec credential plugins in spec.kubeConfig")
	fs.BoolVar(&o.InsecureKubeConfigTLS, "insecure-kubeconfig-tls", o.InsecureKubeConfigTLS, "allow kubeconfigs in spec.kubeConfig that skip TLS verification")
	fs.StringVar(&o.StoragePath, "storage-path", o.StoragePath, "directory artifacts are stored in")
	fs.StringVar(&o.StorageAddr, "storage-addr", o.StorageAddr, "address the artifact file server binds to")
	fs.StringVar(&o.StorageAdvAddr, "storage-adv-addr", o.StorageAdvAddr, "host:port written into artifact URLs (default: the storage address on this host)")
	fs.DurationVar(&o.ArtifactRetentionTTL, "artifact-retention-ttl", o.ArtifactRetentionTTL, "how long superseded artifacts are kept")
	fs.IntVar(&o.ArtifactRetentionRecords, "artifact-retention-records", o.ArtifactRetentionRecords, "how many artifacts per object are kept")
	fs.StringVar(&o.ArtifactDigestAlgo, "artifact-digest-algo", o.ArtifactDigestAlgo, "artifact digest algorithm: sha256, sha384, sha512")
	fs.Int64Var(&o.HelmIndexMaxSize, "helm-index-max-size", o.HelmIndexMaxSize, "the max allowed size in bytes of a Helm repository index file")
	fs.Int64Var(&o.HelmChartMaxSize, "helm-chart-max-size", o.HelmChartMaxSize, "the max allowed size in bytes of a Helm chart file")
	fs.Int64Var(&o.HelmChartFileMaxSize, "helm-chart-file-max-size", o.HelmChartFileMaxSize, "the max allowed size in bytes of a file in a Helm chart")
	fs.IntVar(&o.HelmCacheMaxSize, "helm-cache-max-size", o.HelmCacheMaxSize, "the maximum size of the cache in number of indexes; 0 disables it")
	fs.DurationVar(&o.HelmCacheTTL, "helm-cache-ttl", o.HelmCacheTTL, "the TTL of an index in the cache")
	fs.DurationVar(&o.HelmCachePurgeInterval, "helm-cache-purge-interval", o.HelmCachePurgeInterval, "the interval at which the cache is purged")
	o.addReplicaFlags(fs)
	o.ImageReflector.addFlags(fs)
	o.FluxOnly.addFlags(fs)
	o.addUIFlags(fs)
}

// addReplicaFlags registers the flags of several replicas: leader
// election, and automatic sharding.
func (o *Options) addReplicaFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.EnableLeaderElection, "enable-leader-election", o.EnableLeaderElection, "elect a leader so only one replica reconciles")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "leader election lease duration")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "leader election renew deadline")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "leader election retry period")
	fs.BoolVar(&o.LeaderElectionReleaseOnCancel, "leader-election-release-on-cancel", o.LeaderElectionReleaseOnCancel, "give the leader lease up when the manager stops")
	fs.StringVar(&o.ShardMode, "shard-mode", o.ShardMode, "off, or auto: every replica is active and reconciles the objects "+
		"consistent hashing gives it among the live replicas (takes precedence over --enable-leader-election)")
	fs.StringVar(&o.ShardGroup, "shard-group", o.ShardGroup, "name of the replicas sharing the objects with --shard-mode=auto "+
		"(default: one group per --controllers and --watch-label-selector)")
}

// autoSharding reports whether --shard-mode=auto is given.
func (o *Options) autoSharding() bool { return o.ShardMode == shardModeAuto }

const shardModeAuto = "auto"

// addUIFlags registers the flags of --controllers=ui.
func (o *Options) addUIFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.UIAddr, "ui-addr", o.UIAddr, "address the web UI binds to (--controllers=ui)")
	fs.BoolVar(&o.UISecureCookies, "ui-secure-cookies", false, "mark the web UI's session cookie Secure, when a TLS-terminating proxy serves it")
}

// Selected returns the controllers --controllers names, in a stable order,
// after checking the flags whose meaning depends on them, as Flux's
// controllers check theirs at start.
func (o *Options) Selected() ([]string, error) {
	selected, err := selectControllers(o.Controllers, AllControllers())
	if err != nil {
		return nil, err
	}
	if err := checkFeatureGates(o.FeatureGates, selected); err != nil {
		return nil, err
	}
	if _, err := parseGroupKinds(o.CustomApplyStageKinds); err != nil {
		return nil, err
	}
	if m := o.ShardMode; m != "" && m != "off" && m != shardModeAuto {
		return nil, fmt.Errorf("--shard-mode=%s: want off or auto", m)
	}
	if contains(selected, "notification") {
		if _, err := eventsListenAddr(o, selected); err != nil {
			return nil, err
		}
	}
	return selected, nil
}

// selectControllers applies --controllers values to the known names.
func selectControllers(values, all []string) ([]string, error) {
	var picked []string
	excluded := map[string]bool{}
	for _, raw := range values {
		name := strings.TrimSpace(raw)
		switch {
		case name == "*":
			for _, n := range all {
				if !slices.Contains(optIn, n) {
					picked = append(picked, n)
				}
			}
		case strings.HasPrefix(name, "-"):
			name = strings.TrimPrefix(name, "-")
			if !slices.Contains(all, name) {
				return nil, fmt.Errorf("unknown controller %q in --controllers (known: %s)", name, strings.Join(all, ", "))
			}
			excluded[name] = true
		case name == "":
		default:
			if !slices.Contains(all, name) {
				return nil, fmt.Errorf("unknown controller %q in --controllers (known: %s)", name, strings.Join(all, ", "))
			}
			picked = append(picked, name)
		}
	}
	var out []string
	for _, name := range all {
		if slices.Contains(picked, name) && !excluded[name] {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--controllers=%s selects no controller", strings.Join(values, ","))
	}
	return out, nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// featureGates is --feature-gates: component-base's MapStringBool, as
// Flux's controllers parse it, over a map that is never nil.
func featureGates(m *map[string]bool) *cliflag.MapStringBool {
	if *m == nil {
		*m = map[string]bool{}
	}
	return cliflag.NewMapStringBool(m)
}
