package release

import (
	"context"

	"helm.sh/helm/v4/pkg/action"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Test runs the release's test hooks as spec.test says (timeout, filters)
// and returns the release with the hooks' results.
func (c *Client) Test(ctx context.Context, hr *helmv2.HelmRelease) (*releasev1.Release, error) {
	spec := hr.GetTest()
	test := action.NewReleaseTesting(c.cfg)
	test.Namespace = c.opts.Namespace
	test.Timeout = spec.GetTimeout(hr.GetTimeout())
	test.Filters = testFilters(spec.Filters)
	var rel *releasev1.Release
	err := runCancellable(ctx, func() error {
		rls, shutdown, err := test.Run(c.opts.Name)
		if shutdown != nil {
			defer func() { _ = shutdown() }()
		}
		rel, _ = toV1(rls)
		return err
	})
	return rel, err
}

// testFilters is spec.test.filters as the SDK takes them: names to run
// under "name", names to skip under "!name".
func testFilters(filters []helmv2.Filter) map[string][]string {
	if len(filters) == 0 {
		return nil
	}
	out := map[string][]string{}
	for _, f := range filters {
		key := "name"
		if f.Exclude {
			key = "!name"
		}
		out[key] = append(out[key], f.Name)
	}
	return out
}
