// Package pullcmd implements `weir pull artifact`: a Flux OCI artifact
// (by tag or digest) fetched and its content layer extracted into a local
// directory with weir's safe untar (internal/source/oci.FetchedArtifact).
package pullcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/cli/registryflags"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// NewCommand returns `weir pull`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{Use: "pull", Short: "Pull artifacts from an OCI registry"}
	var registry registryflags.Flags
	var dir string
	art := &cobra.Command{
		Use:   "artifact oci://REPO:TAG --output DIR",
		Short: "Pull a Flux OCI artifact and extract its content",
		Example: `  # Pull by tag
  weir pull artifact oci://ghcr.io/org/app:v1 --output ./app

  # Pull by digest
  weir pull artifact oci://ghcr.io/org/app@sha256:... --output ./app`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if dir == "" {
				return fmt.Errorf("invalid output path: --output is required")
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			ref, opts, err := registry.Reference(ctx, args[0])
			if err != nil {
				return err
			}
			p := output.Progress{W: streams.ErrOut}
			p.Actionf("pulling artifact from %s", ref.String())
			a, err := oci.FetchArtifact(ref, opts...)
			if err != nil {
				return err
			}
			if a.Metadata.Source != "" {
				p.Successf("source %s", a.Metadata.Source)
			}
			if a.Metadata.Revision != "" {
				p.Successf("revision %s", a.Metadata.Revision)
			}
			p.Successf("digest %s", ref.Context().Digest(a.Digest).String())
			if err := a.Extract(dir); err != nil {
				return err
			}
			p.Successf("artifact content extracted to %s", dir)
			return nil
		},
	}
	art.Flags().StringVarP(&dir, "output", "o", "", "path where the artifact content should be extracted")
	registry.AddFlags(art.Flags())
	cmd.AddCommand(art)
	return cmd
}
