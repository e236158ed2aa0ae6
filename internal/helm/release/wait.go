package release

import (
	"helm.sh/helm/v4/pkg/kube"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// waitStrategy maps disableWait and spec.waitStrategy onto Helm's waiters:
// no wait waits for hooks only; poller (the default) is Helm 4's kstatus
// watcher; legacy is Helm 3's readiness poll.
func (c *Client) waitStrategy(hr *helmv2.HelmRelease, disableWait bool) kube.WaitStrategy {
	if disableWait {
		return kube.HookOnlyStrategy
	}
	name := helmv2.WaitStrategyPoller
	if c.opts.UseHelm3Defaults {
		name = helmv2.WaitStrategyLegacy
	}
	if hr.Spec.WaitStrategy != nil && hr.Spec.WaitStrategy.Name != "" {
		name = hr.Spec.WaitStrategy.Name
	}
	if name == helmv2.WaitStrategyLegacy {
		return kube.LegacyStrategy
	}
	return kube.StatusWatcherStrategy
}

// serverSideApply is spec.upgrade/rollback serverSideApply as the SDK's
// "true", "false" or "auto" (do what the release being replaced did).
func serverSideApply(mode helmv2.ServerSideApplyMode) string {
	switch mode {
	case helmv2.ServerSideApplyEnabled:
		return "true"
	case helmv2.ServerSideApplyDisabled:
		return "false"
	default:
		return "auto"
	}
}

// WaitsWithPoller reports whether an action of hr with disableWait waits
// with Helm 4's kstatus watcher: the only strategy spec.healthCheckExprs
// apply to, as in Flux.
func (c *Client) WaitsWithPoller(hr *helmv2.HelmRelease, disableWait bool) bool {
	return c.waitStrategy(hr, disableWait) == kube.StatusWatcherStrategy
}
