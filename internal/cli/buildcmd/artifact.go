package buildcmd

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// newArtifactCommand returns `weir build artifact`: the tarball `push
// artifact` would upload, written to a local file.
func newArtifactCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var path, out string
	var ignore []string
	cmd := &cobra.Command{
		Use:   "artifact --path DIR --output FILE.tgz",
		Short: "Build a tarball from a directory, as push artifact packs it",
		Example: `  # Pack the manifests for a later push or a signature
  weir build artifact --path ./deploy --output ./artifact.tgz`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if path == "" {
				return fmt.Errorf("invalid path: --path is required")
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			p := output.Progress{W: streams.ErrOut}
			p.Actionf("building artifact from %s", path)
			content, err := oci.BuildTarball(ctx, path, oci.BuildOptions{IgnorePaths: ignore})
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, content, 0o644); err != nil {
				return fmt.Errorf("writing the artifact: %w", err)
			}
			p.Successf("artifact created at %s", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "path", "", "path to the directory where the Kubernetes manifests are located")
	cmd.Flags().StringVarP(&out, "output", "o", "artifact.tgz", "path to where the artifact tgz file should be written")
	cmd.Flags().StringSliceVar(&ignore, "ignore-paths", nil, "set paths to ignore in .gitignore format")
	return cmd
}
