package release

import (
	"context"

	"helm.sh/helm/v4/pkg/action"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Install installs chart with values as spec.install says. replace reuses
// the name of an uninstalled release kept in history (keepHistory) even
// when spec.install.replace is off, as there is nothing else to install
// over.
func (c *Client) Install(ctx context.Context, hr *helmv2.HelmRelease, chrt *chartv2.Chart, values map[string]any, replace bool) (*releasev1.Release, error) {
	spec := hr.GetInstall()
	policy := spec.GetCRDsPolicy()
	if policy == helmv2.CreateReplace {
		if err := c.applyCRDs(chrt, policy); err != nil {
			return nil, err
		}
	}
	install := c.newInstall(hr, spec)
	install.Replace = spec.Replace || replace
	// Helm creates the CRDs itself only for Create.
	install.SkipCRDs = policy != helmv2.Create
	if c.Parks(hr, chrt, ActionInstall) {
		install.WaitStrategy, install.WaitForJobs = kube.HookOnlyStrategy, false
	}
	c.shareCapabilities(ctx, chrt)
	rls, err := install.RunWithContext(ctx, chrt, values)
	rel, _ := toV1(rls)
	return rel, err
}

// newInstall maps spec.install onto the SDK's action.
func (c *Client) newInstall(hr *helmv2.HelmRelease, spec helmv2.Install) *action.Install {
	install := action.NewInstall(c.cfg)
	install.ReleaseName = c.opts.Name
	install.Namespace = c.opts.Namespace
	install.Timeout = spec.GetTimeout(hr.GetTimeout())
	install.WaitStrategy = c.waitStrategy(hr, spec.DisableWait)
	install.WaitForJobs = !spec.DisableWait && !spec.DisableWaitForJobs
	install.DisableHooks = spec.DisableHooks
	install.DisableOpenAPIValidation = spec.DisableOpenAPIValidation
	install.SkipSchemaValidation = spec.DisableSchemaValidation
	install.CreateNamespace = spec.CreateNamespace
	install.TakeOwnership = !spec.DisableTakeOwnership
	install.ServerSideApply = !c.opts.UseHelm3Defaults
	if spec.ServerSideApply != nil {
		install.ServerSideApply = *spec.ServerSideApply
	}
	// The controller owns the release's fields: a conflict with another
	// manager (kubectl edit) is resolved in favour of the chart.
	install.ForceConflicts = install.ServerSideApply
	install.EnableDNS = c.opts.AllowDNSLookups
	install.PostRenderStrategy = postRenderStrategy(hr, c.opts.UseHelm3Defaults)
	install.PostRenderer = PostRenderer(hr)
	return install
}

// postRenderStrategy is spec.postRenderStrategy, combined by default
// (nohooks with UseHelm3Defaults).
func postRenderStrategy(hr *helmv2.HelmRelease, helm3 bool) action.PostRenderStrategy {
	switch hr.Spec.PostRenderStrategy {
	case "nohooks":
		return action.PostRenderStrategyNoHooks
	case "separate":
		return action.PostRenderStrategySeparate
	case "combined":
		return action.PostRenderStrategyCombined
	}
	if helm3 {
		return action.PostRenderStrategyNoHooks
	}
	return action.PostRenderStrategyCombined
}
