// Package versioncmd implements `weir version`.
package versioncmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/version"
)

// NewCommand returns `weir version`.
func NewCommand(streams genericiooptions.IOStreams, _ *clideps.Deps) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print weir's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(streams.Out, "weir: %s\n", version.Version)
			return err
		},
	}
}
