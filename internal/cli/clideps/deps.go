// Package clideps holds what every weir command needs from the root: the
// kubectl-style connection flags, the timeout, and constructors for clients.
// Commands receive a *Deps instead of reading globals, so tests can give
// them a kubeconfig of their own.
package clideps

import (
	"fmt"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/scheme"
)

// Deps is shared by every command.
type Deps struct {
	Kube    *genericclioptions.ConfigFlags
	Timeout time.Duration
	Verbose bool
}

// DefaultTimeout is the --timeout default, as in the flux CLI.
func (d *Deps) DefaultTimeout() time.Duration { return 5 * time.Minute }

// Namespace is the namespace from -n, the kubeconfig context, or the default.
func (d *Deps) Namespace() string {
	if d.Kube.Namespace != nil && *d.Kube.Namespace != "" {
		return *d.Kube.Namespace
	}
	return "flux-system"
}

// Client returns a client for the cluster the flags select.
func (d *Deps) Client() (client.Client, error) {
	cfg, err := d.Kube.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return c, nil
}
