package release

import (
	"context"
	"errors"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Uninstall uninstalls the release as spec.uninstall says (hooks,
// keepHistory, deletionPropagation, wait). A release already gone is no
// error, nor are its records gone while Helm purged them: deleting a
// namespace deletes the release Secrets in it while the controller
// uninstalls, and what the purge was to do is done.
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
		if err != nil && onlyRecordsGone(err) {
			return nil
		}
		return err
	})
}

// onlyRecordsGone reports whether each of the errors an uninstall
// completed with says a release record it went to purge was not there.
func onlyRecordsGone(err error) bool {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) == 0 {
		return false
	}
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, driver.ErrReleaseNotFound) && !apierrors.IsNotFound(e) {
			return false
		}
	}
	return true
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
