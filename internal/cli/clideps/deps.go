// Package clideps holds what every weir command needs from the root: the
// kubectl-style connection flags, the timeout, the clock, and constructors
// for clients. Commands receive a *Deps instead of reading globals, so tests
// can give them a kubeconfig and a clock of their own.
package clideps

import (
	"fmt"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/scheme"
)

// DefaultPollInterval is how often commands that wait re-read an object, as
// the flux CLI's hidden --poll-interval default.
const DefaultPollInterval = 2 * time.Second

// Deps is shared by every command.
type Deps struct {
	Kube    *genericclioptions.ConfigFlags
	Timeout time.Duration
	Verbose bool
	// Now is the clock: reconcile request tokens and ages shown in tables
	// are read from it, so golden files stay stable. Nil means time.Now.
	Now func() time.Time
	// PollInterval is how often waiting commands re-read an object. Zero
	// means DefaultPollInterval.
	PollInterval time.Duration
	// QPS and Burst bound the requests to the API server (the flux CLI's
	// --kube-api-qps and --kube-api-burst). Zero means DefaultQPS and
	// DefaultBurst.
	QPS   float32
	Burst int
	// NamespaceFollowsContext is --ns-follows-kube-context: without -n,
	// the namespace is the kubeconfig context's.
	NamespaceFollowsContext bool
	// NamespaceChanged reports whether -n was given; nil means it was not.
	NamespaceChanged func() bool
}

// The flux CLI's --kube-api-qps and --kube-api-burst defaults: waiting
// commands poll, and client-go's own defaults (5, 10) would throttle them.
const (
	DefaultQPS   = 50
	DefaultBurst = 300
)

// DefaultTimeout is the --timeout default, as in the flux CLI.
func (d *Deps) DefaultTimeout() time.Duration { return 5 * time.Minute }

// Namespace is the namespace from -n, else the kubeconfig context's with
// --ns-follows-kube-context (when the context names one), else
// $FLUX_SYSTEM_NAMESPACE or flux-system, which the root sets as -n's
// default.
func (d *Deps) Namespace() string {
	if d.NamespaceFollowsContext && (d.NamespaceChanged == nil || !d.NamespaceChanged()) {
		if ns := d.contextNamespace(); ns != "" {
			return ns
		}
	}
	if d.Kube.Namespace != nil && *d.Kube.Namespace != "" {
		return *d.Kube.Namespace
	}
	return "flux-system"
}

// contextNamespace is the namespace of the kubeconfig context in use
// (--context, else the current one), "" when it names none or the
// kubeconfig cannot be read.
func (d *Deps) contextNamespace() string {
	raw, err := d.Kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	name := raw.CurrentContext
	if d.Kube.Context != nil && *d.Kube.Context != "" {
		name = *d.Kube.Context
	}
	if c := raw.Contexts[name]; c != nil {
		return c.Namespace
	}
	return ""
}

// RESTConfig is the connection the flags select, with the request rate
// of --kube-api-qps and --kube-api-burst.
func (d *Deps) RESTConfig() (*rest.Config, error) {
	cfg, err := d.Kube.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = d.QPS, d.Burst
	if cfg.QPS == 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	return cfg, nil
}

// Clock returns the current time from Now, or the wall clock.
func (d *Deps) Clock() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Poll returns the interval between two reads of an awaited object.
func (d *Deps) Poll() time.Duration {
	if d.PollInterval > 0 {
		return d.PollInterval
	}
	return DefaultPollInterval
}

// Client returns a client for the cluster the flags select. It can watch,
// for `get --watch` and `events --watch`.
func (d *Deps) Client() (client.WithWatch, error) {
	cfg, err := d.RESTConfig()
	if err != nil {
		return nil, err
	}
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return c, nil
}
