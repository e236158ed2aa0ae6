package release

import (
	"bytes"
	"fmt"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// applyCRDs applies the chart's crds/ directory by policy: Create creates
// the missing CRDs and leaves existing ones alone; CreateReplace also
// replaces existing ones (server-side apply, forced). No CRD is ever
// deleted. Skip does nothing.
func (c *Client) applyCRDs(chrt *chartv2.Chart, policy helmv2.CRDsPolicy) error {
	if policy == helmv2.Skip || policy == "" {
		return nil
	}
	var all kube.ResourceList
	for _, crd := range chrt.CRDObjects() {
		res, err := c.cfg.KubeClient.Build(bytes.NewBuffer(crd.File.Data), false)
		if err != nil {
			return fmt.Errorf("failed to parse CRDs from %s: %w", crd.Filename, err)
		}
		all = append(all, res...)
	}
	if len(all) == 0 {
		return nil
	}
	if policy == helmv2.CreateReplace {
		if _, err := c.cfg.KubeClient.Update(all, all, kube.ClientUpdateOptionServerSideApply(true, true)); err != nil {
			return fmt.Errorf("failed to create or replace CRDs: %w", err)
		}
		return nil
	}
	var missing kube.ResourceList
	for _, info := range all {
		if err := info.Get(); err != nil {
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("failed to get CRD %s: %w", info.Name, err)
			}
			missing = append(missing, info)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.cfg.KubeClient.Create(missing, kube.ClientCreateOptionServerSideApply(true, true)); err != nil {
		return fmt.Errorf("failed to create CRDs: %w", err)
	}
	return nil
}
