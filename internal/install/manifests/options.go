package manifests

import (
	"fmt"
	"slices"
	"strings"
)

// Layout says how the controllers are spread over Deployments.
type Layout string

const (
	// LayoutSplit gives each component a Deployment of its own, named as
	// Flux names it (source-controller, kustomize-controller, …).
	LayoutSplit Layout = "split"
	// LayoutSingle runs every controller in one Deployment, weir-controller,
	// sharing one cache and one process.
	LayoutSingle Layout = "single"
)

// SingleName names the Deployment and ServiceAccount of the single layout.
const SingleName = "weir-controller"

// Component names, as Flux's.
const (
	SourceController       = "source-controller"
	KustomizeController    = "kustomize-controller"
	HelmController         = "helm-controller"
	NotificationController = "notification-controller"
	// ImageReflectorController scans image repositories and elects
	// ImagePolicies' latest images.
	ImageReflectorController = "image-reflector-controller"
	// ImageAutomationController commits ImagePolicies' images to Git.
	ImageAutomationController = "image-automation-controller"
	// SourceWatcher builds ArtifactGenerators' ExternalArtifacts; in the
	// split layout it stores and serves them itself, behind a Service of
	// its name, as Flux's source-watcher does.
	SourceWatcher = "source-watcher"
	// UI is weir's web UI in cluster mode (--components-extra=ui): a
	// Deployment of its own in either layout, whose ServiceAccount may
	// only review tokens, impersonate and write Events.
	UI = "ui"
)

// knownComponents are the components Flux's --components and
// --components-extra accept.
var knownComponents = []string{
	SourceController, KustomizeController, HelmController, NotificationController,
	ImageReflectorController, ImageAutomationController, SourceWatcher, UI,
}

// controllerOf maps the components weir has controllers for to the
// weir-controller --controllers name that runs them. The others are
// accepted on the command line and left out of the manifests.
var controllerOf = map[string]string{
	SourceController:       "source",
	KustomizeController:    "kustomize",
	HelmController:         "helm",
	NotificationController: "notification",
	// --components-extra, as `flux install` takes them.
	ImageReflectorController:  "image-reflector",
	ImageAutomationController: "image-automation",
	SourceWatcher:             "source-watcher",
	UI:                        "ui",
}

// componentOrder is the order weir generates components in.
var componentOrder = []string{SourceController, KustomizeController, HelmController, NotificationController,
	ImageReflectorController, ImageAutomationController, SourceWatcher}

// Options are the knobs of `weir install`; names and defaults are those of
// `flux install`.
type Options struct {
	// Version is written to app.kubernetes.io/version and is the image tag.
	Version string
	// Namespace is where the controllers run; also app.kubernetes.io/instance
	// and the suffix of the cluster-wide RBAC names.
	Namespace string
	// Components and ComponentsExtra name Flux components; only those weir
	// has controllers for are generated (see Selected).
	Components      []string
	ComponentsExtra []string
	// Registry is the image registry: the image is <Registry>/weir-controller:<Version>.
	Registry string
	// ImagePullSecret names a Secret in Namespace the pods pull with.
	ImagePullSecret string
	// RegistryCredential is "user:password" for Registry; install and
	// bootstrap create the ImagePullSecret from it (see PullSecret).
	RegistryCredential string
	// NetworkPolicy adds Flux's NetworkPolicies.
	NetworkPolicy      bool
	WatchAllNamespaces bool
	LogLevel           string
	// TolerationKeys become tolerations with operator Exists.
	TolerationKeys []string
	// ClusterDomain is the cluster's DNS domain, used in the artifact URL.
	ClusterDomain string
	Layout        Layout
	// Shards name the shards of the sharded controllers (source, kustomize
	// and helm, as the Flux Operator's spec.sharding.shards): each gets a
	// Deployment of its own per controller, reconciling the objects whose
	// sharding.fluxcd.io/key label is the shard's name, while the main
	// Deployments leave every labelled object alone (see shards.go).
	Shards []string
	// ShardMode "auto" runs the sharded controllers' Deployments with
	// --shard-mode=auto (design 0037): Replicas active replicas each,
	// every one advertising its own pod IP for its artifacts (see
	// shards.go). "off" (the default) is Flux's: one replica.
	ShardMode string
	// Replicas is the replica count of those Deployments; more than one
	// needs ShardMode "auto".
	Replicas int
}

// DefaultRegistry is where weir's image is published.
const DefaultRegistry = "ghcr.io/weir-gitops"

// DefaultOptions returns `flux install`'s defaults, with weir's registry and
// the given version.
func DefaultOptions(version string) Options {
	return Options{
		Version:            version,
		Namespace:          "flux-system",
		Components:         []string{SourceController, KustomizeController, HelmController, NotificationController},
		Registry:           DefaultRegistry,
		NetworkPolicy:      true,
		WatchAllNamespaces: true,
		LogLevel:           "info",
		ClusterDomain:      "cluster.local",
		Layout:             LayoutSplit,
		ShardMode:          ShardModeOff,
		Replicas:           1,
	}
}

// Selected returns the requested components weir has controllers for, in
// a stable order, and those it accepted but has no controller for.
// Unknown names are an error.
func (o Options) Selected() (run, skipped []string, err error) {
	requested := append(append([]string{}, o.Components...), o.ComponentsExtra...)
	for _, c := range requested {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if !slices.Contains(knownComponents, c) {
			return nil, nil, fmt.Errorf("unknown component %q (known: %s)", c, strings.Join(knownComponents, ", "))
		}
		if _, ok := controllerOf[c]; !ok && !slices.Contains(skipped, c) {
			skipped = append(skipped, c)
		}
	}
	for _, c := range componentOrder {
		if slices.Contains(requested, c) {
			run = append(run, c)
		}
	}
	return run, skipped, nil
}

// Controller returns the weir-controller --controllers name of a component
// weir runs, or "".
func Controller(component string) string { return controllerOf[component] }

// Image returns the controller image reference.
func (o Options) Image() string {
	return strings.TrimSuffix(o.Registry, "/") + "/" + SingleName + ":" + o.Version
}

func (o Options) validate() error {
	switch o.Layout {
	case LayoutSplit, LayoutSingle:
	default:
		return fmt.Errorf("unknown layout %q: want split or single", o.Layout)
	}
	switch o.LogLevel {
	case "debug", "info", "error", "trace":
	default:
		return fmt.Errorf("unsupported log level %q: want debug, info, error or trace", o.LogLevel)
	}
	if o.Namespace == "" {
		return fmt.Errorf("namespace is required")
	}
	if o.Version == "" {
		return fmt.Errorf("version is required")
	}
	if err := validateShardMode(o.ShardMode, o.Replicas); err != nil {
		return err
	}
	return validateShards(o.Shards)
}
