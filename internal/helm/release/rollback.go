package release

import (
	"context"

	"helm.sh/helm/v4/pkg/action"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Rollback rolls the release back to revision version as spec.rollback
// says. spec.rollback.recreate has no Helm 4 counterpart and is ignored.
func (c *Client) Rollback(ctx context.Context, hr *helmv2.HelmRelease, version int) error {
	spec := hr.GetRollback()
	rollback := action.NewRollback(c.cfg)
	rollback.Version = version
	rollback.Timeout = spec.GetTimeout(hr.GetTimeout())
	rollback.WaitStrategy = c.waitStrategy(hr, spec.DisableWait)
	rollback.WaitForJobs = !spec.DisableWait && !spec.DisableWaitForJobs
	rollback.DisableHooks = spec.DisableHooks
	rollback.ForceReplace = spec.Force
	rollback.CleanupOnFail = spec.CleanupOnFail
	rollback.MaxHistory = c.opts.MaxHistory
	rollback.ServerSideApply = upgradeSSA(spec.ServerSideApply, c.opts.UseHelm3Defaults)
	rollback.ForceConflicts = rollback.ServerSideApply != "false"
	return runCancellable(ctx, func() error { return rollback.Run(c.opts.Name) })
}
