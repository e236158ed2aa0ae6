// Package tagcmd implements `weir tag artifact`: more tags for an artifact
// already in a registry, pointing at the same manifest (no blob is copied).
package tagcmd

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/cli/registryflags"
)

// NewCommand returns `weir tag`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{Use: "tag", Short: "Tag artifacts in an OCI registry"}
	var registry registryflags.Flags
	var tags []string
	art := &cobra.Command{
		Use:   "artifact oci://REPO:TAG --tag TAG...",
		Short: "Tag an OCI artifact with more tags",
		Example: `  # Promote an artifact to latest
  weir tag artifact oci://ghcr.io/org/app:v1.0.0 --tag latest --tag v1`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(tags) == 0 {
				return fmt.Errorf("--tag is required")
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			ref, opts, err := registry.Reference(ctx, args[0])
			if err != nil {
				return err
			}
			p := output.Progress{W: streams.ErrOut}
			p.Actionf("tagging artifact")
			desc, err := remote.Get(ref, opts...)
			if err != nil {
				return fmt.Errorf("fetching artifact %s: %w", ref.String(), err)
			}
			for _, t := range tags {
				dst := ref.Context().Tag(t)
				if err := remote.Tag(dst, desc, opts...); err != nil {
					return fmt.Errorf("tagging %s as %s: %w", ref.String(), dst.String(), err)
				}
				p.Successf("artifact tagged as %s", dst.String())
			}
			return nil
		},
	}
	art.Flags().StringSliceVar(&tags, "tag", nil, "tag name")
	registry.AddFlags(art.Flags())
	cmd.AddCommand(art)
	return cmd
}
