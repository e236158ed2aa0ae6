package release

import (
	"context"

	"helm.sh/helm/v4/pkg/action"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Uninstall uninstalls the release as spec.uninstall says (hooks,
// keepHistory, deletionPropagation, wait). A release already gone is no
// error.
func (c *Client) Uninstall(ctx context.Context, hr *helmv2.HelmRelease) error {
	spec := hr.GetUninstall()
	uninstall := action.NewUninstall(c.cfg)
	uninstall.Timeout = spec.GetTimeout(hr.GetTimeout())
	uninstall.DisableHooks = spec.DisableHooks
	uninstall.KeepHistory = spec.KeepHistory
	uninstall.WaitStrategy = c.waitStrategy(hr, spec.DisableWait)
	uninstall.DeletionPropagation = spec.GetDeletionPropagation()
	uninstall.IgnoreNotFound = true
	return runCancellable(ctx, func() error {
		_, err := uninstall.Run(c.opts.Name)
		return err
	})
}

// runCancellable runs an SDK call that takes no context; when ctx ends
// first its error is returned, and the call is left to finish (its own
// timeout bounds it).
func runCancellable(ctx context.Context, run func() error) error {
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
