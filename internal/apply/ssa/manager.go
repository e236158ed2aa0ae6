package ssa

import (
	"context"
	"errors"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of Options and ApplyOptions.
const (
	// DefaultConcurrency is kustomize-controller's --concurrent-ssa default.
	DefaultConcurrency = 4
	// DefaultPollInterval is how often Flux polls while waiting for the
	// definitions of the first stages.
	DefaultPollInterval = 2 * time.Second
	// DefaultWaitTimeout bounds the wait for the definitions of the first
	// stages (Flux's DefaultApplyOptions).
	DefaultWaitTimeout = 60 * time.Second
)

// Options configures a Manager.
type Options struct {
	// Concurrency bounds the requests Apply, Prune and Wait have in flight
	// at once. Default DefaultConcurrency.
	Concurrency int
	// PollInterval is how often Wait, and Apply between stages, read the
	// objects they wait for. Default DefaultPollInterval.
	PollInterval time.Duration
}

// Manager applies, prunes and waits for objects through one client: the
// controller's, or one that impersonates the Kustomization's service
// account or talks to a remote cluster.
type Manager struct {
	client       client.Client
	concurrency  int
	pollInterval time.Duration
}

// NewManager returns a Manager over c. c must read unstructured objects
// from the API server, not from a cache, and its RESTMapper must discover
// kinds that appear after it was built (controller-runtime's default
// dynamic mapper does), since Apply serves custom resources whose
// definitions it has just created.
func NewManager(c client.Client, opts Options) *Manager {
	if opts.Concurrency < 1 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	return &Manager{client: c, concurrency: opts.Concurrency, pollInterval: opts.PollInterval}
}

// forEach runs fn for every index in [0, n) with at most limit calls in
// flight, waits for all of them, and returns their errors joined in index
// order, so that a failure report does not depend on scheduling.
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
		if errs[i] != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(ctx, i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Client returns the client the Manager applies and reads with.
func (m *Manager) Client() client.Client { return m.client }
