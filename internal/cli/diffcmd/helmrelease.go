package diffcmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/buildcmd"
	"github.com/weir-gitops/weir/internal/cli/clideps"
)

// newHelmReleaseCommand returns `weir diff helmrelease`.
func newHelmReleaseCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	opts := buildcmd.HelmReleaseOptions{}
	cmd := &cobra.Command{
		Use:     "helmrelease NAME",
		Aliases: []string{"hr"},
		Short:   "Diff a HelmRelease rendered as the controller would against the cluster",
		Long: `diff renders a HelmRelease as ` + "`weir build helmrelease`" + ` does (the chart its source
holds now, so a new chart version shows before the controller installs it), runs a server-side
dry-run of every object against the cluster, and prints the objects that
would be created, changed (with a diff, Secret values masked) or deleted
(in the current release, no longer rendered). CRDs are compared when the
CRD policy would write them.

Exit status: 0 no differences, 1 differences found, 2 or more an error.`,
		Example: `  # Preview a values change before pushing it
  weir diff hr podinfo -n apps --file ./apps/podinfo/release.yaml --chart-dir ./charts/podinfo`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return exitStatus(runHelmRelease(ctx, streams, deps, args[0], opts))
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// runHelmRelease prints the changes and reports whether there are any.
func runHelmRelease(ctx context.Context, streams genericiooptions.IOStreams, deps *clideps.Deps, name string,
	opts buildcmd.HelmReleaseOptions) (bool, error) {
	hr, err := buildcmd.RenderHelmRelease(ctx, deps, name, opts)
	if err != nil {
		return false, err
	}
	buildcmd.NoteChart(streams.ErrOut, hr)
	if hr.Client == nil {
		_, err := deps.Client()
		return false, err
	}
	res, err := hr.Diff(ctx)
	res.Print(streams.Out)
	return res.HasChanges(), err
}
