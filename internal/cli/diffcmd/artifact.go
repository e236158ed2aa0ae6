package diffcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/cli/registryflags"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// newArtifactCommand returns `weir diff artifact`: the files of a pushed
// artifact compared with a local directory packed as push would pack it.
func newArtifactCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var registry registryflags.Flags
	var path string
	var ignore []string
	cmd := &cobra.Command{
		Use:   "artifact oci://REPO:TAG --path DIR",
		Short: "Diff a pushed OCI artifact against a local directory",
		Long: `diff packs --path as push artifact would and compares its files (paths,
contents, executable bits) with those of the pushed artifact.

Exit status: 0 no differences, 1 differences found, 2 or more an error.`,
		Example: `  # Is the artifact up to date with the working tree?
  weir diff artifact oci://ghcr.io/org/app:latest --path ./deploy`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if path == "" {
				return &output.ExitError{Code: 2, Err: errors.New("invalid path: --path is required")}
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			same, err := diffArtifact(ctx, streams, &registry, args[0], path, ignore)
			if err != nil {
				return &output.ExitError{Code: 2, Err: err}
			}
			if !same {
				return &output.ExitError{Code: 1, Err: errors.New("the remote artifact contents differs from the local one")}
			}
			output.Progress{W: streams.ErrOut}.Successf("no changes detected")
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "path", "", "path to the directory where the Kubernetes manifests are located")
	cmd.Flags().StringSliceVar(&ignore, "ignore-paths", nil, "set paths to ignore in .gitignore format")
	registry.AddFlags(cmd.Flags())
	return cmd
}

func diffArtifact(ctx context.Context, streams genericiooptions.IOStreams, registry *registryflags.Flags, url, path string, ignore []string) (bool, error) {
	ref, opts, err := registry.Reference(ctx, url)
	if err != nil {
		return false, err
	}
	local, err := oci.BuildTarball(ctx, path, oci.BuildOptions{IgnorePaths: ignore})
	if err != nil {
		return false, err
	}
	output.Progress{W: streams.ErrOut}.Actionf("comparing local files to artifact %s", ref.String())
	a, err := oci.FetchArtifact(ref, opts...)
	if err != nil {
		return false, err
	}
	remote, err := a.Content()
	if err != nil {
		return false, err
	}
	same, err := oci.SameContent(local, remote)
	if err != nil {
		return false, fmt.Errorf("comparing with %s: %w", ref.String(), err)
	}
	return same, nil
}
