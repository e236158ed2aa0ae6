package release

import (
	"context"

	"helm.sh/helm/v4/pkg/action"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Upgrade upgrades the release to chart with values as spec.upgrade says.
// Helm's upgrade never touches a chart's crds/ directory, so the Create
// and CreateReplace policies are applied here first.
func (c *Client) Upgrade(ctx context.Context, hr *helmv2.HelmRelease, chrt *chartv2.Chart, values map[string]any) (*releasev1.Release, error) {
	spec := hr.GetUpgrade()
	if err := c.applyCRDs(chrt, spec.GetCRDsPolicy()); err != nil {
		return nil, err
	}
	upgrade := c.newUpgrade(hr, spec)
	if c.Parks(hr, chrt, ActionUpgrade) {
		upgrade.WaitStrategy, upgrade.WaitForJobs = kube.HookOnlyStrategy, false
	}
	c.shareCapabilities(ctx, chrt)
	rls, err := upgrade.RunWithContext(ctx, c.opts.Name, chrt, values)
	rel, _ := toV1(rls)
	return rel, err
}

// newUpgrade maps spec.upgrade onto the SDK's action.
func (c *Client) newUpgrade(hr *helmv2.HelmRelease, spec helmv2.Upgrade) *action.Upgrade {
	upgrade := action.NewUpgrade(c.cfg)
	upgrade.Namespace = c.opts.Namespace
	upgrade.Timeout = spec.GetTimeout(hr.GetTimeout())
	upgrade.WaitStrategy = c.waitStrategy(hr, spec.DisableWait)
	upgrade.WaitForJobs = !spec.DisableWait && !spec.DisableWaitForJobs
	upgrade.DisableHooks = spec.DisableHooks
	upgrade.DisableOpenAPIValidation = spec.DisableOpenAPIValidation
	upgrade.SkipSchemaValidation = spec.DisableSchemaValidation
	upgrade.SkipCRDs = true
	upgrade.ForceReplace = spec.Force
	upgrade.CleanupOnFail = spec.CleanupOnFail
	upgrade.ResetValues = !spec.PreserveValues
	upgrade.ReuseValues = spec.PreserveValues
	upgrade.MaxHistory = c.opts.MaxHistory
	upgrade.TakeOwnership = !spec.DisableTakeOwnership
	upgrade.ServerSideApply = upgradeSSA(spec.ServerSideApply, c.opts.UseHelm3Defaults)
	upgrade.ForceConflicts = upgrade.ServerSideApply != "false"
	upgrade.EnableDNS = c.opts.AllowDNSLookups
	upgrade.PostRenderStrategy = postRenderStrategy(hr, c.opts.UseHelm3Defaults)
	upgrade.PostRenderer = PostRenderer(hr)
	return upgrade
}

// upgradeSSA: an unset mode is auto (follow the release being upgraded);
// with UseHelm3Defaults it is client-side apply.
func upgradeSSA(mode helmv2.ServerSideApplyMode, helm3 bool) string {
	if mode == "" && helm3 {
		return "false"
	}
	return serverSideApply(mode)
}
