package treecmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/view/inventorytree"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// NewCommand returns `weir tree`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Print the resources reconciled by Flux",
		Long:  "The tree sub-commands print the inventory of Flux resources as a tree.",
	}
	ks := subcommand(streams, deps, kinds.Kustomization)
	ks.Use, ks.Aliases = "kustomization [name]", []string{"ks"}
	ks.Short = "Print the resource inventory of a Kustomization"
	ks.Long = "The tree command prints the resource list reconciled by a Kustomization, nested Kustomizations included."
	ks.Example = "  # Print the objects the root Kustomization manages\n  weir tree kustomization flux-system\n\n" +
		"  # Print only the Flux objects\n  weir tree kustomization flux-system --compact"
	hr := subcommand(streams, deps, kinds.HelmRelease)
	hr.Use, hr.Aliases = "helmrelease [name]", []string{"hr"}
	hr.Short = "Print the resource inventory of a HelmRelease"
	hr.Long = `The tree command prints the objects of a HelmRelease's release, from its
status.inventory or, when it has none (a controller that does not write it),
from the manifest of the latest release in Helm's storage; Kustomizations and
HelmReleases the chart creates are nested below them.`
	hr.Example = "  # Print the objects of a release\n  weir tree helmrelease podinfo -n apps"
	ag := subcommand(streams, deps, kinds.ArtifactGenerator)
	ag.Use = "generator [name]"
	ag.Short = "Print the inventory of an ArtifactGenerator"
	ag.Long = `The tree command prints the ExternalArtifacts an ArtifactGenerator generated,
from its status.inventory, each with the Kustomizations and HelmReleases that
read it (spec.sourceRef, spec.chartRef) nested below.`
	ag.Example = "  # Print the ExternalArtifacts of a generator and who reads them\n  weir tree artifact generator flux-system"
	artifact := &cobra.Command{Use: "artifact", Short: "Print the inventory of artifact objects"}
	artifact.AddCommand(ag)
	cmd.AddCommand(ks, hr, artifact)
	return cmd
}

// subcommand is `weir tree <kind> NAME` for a kind with an inventory.
func subcommand(streams genericiooptions.IOStreams, deps *clideps.Deps, k kinds.Kind) *cobra.Command {
	var compact bool
	var format string
	cmd := &cobra.Command{
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: kindcmd.CompleteNames(deps, k),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("%s name is required", strings.ToLower(k.Kind))
			}
			switch format {
			case "", "json", "yaml":
			default:
				return fmt.Errorf("unknown output format %q: use json or yaml", format)
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			cl, err := deps.Client()
			if err != nil {
				return err
			}
			cfg, err := deps.RESTConfig()
			if err != nil {
				return err
			}
			t, err := inventorytree.Build(ctx, cl, k.GVK(), deps.Namespace(), args[0],
				inventorytree.Options{Compact: compact, Storage: inventorytree.HelmStorage(cfg, cl),
					Consumers: k.Kind == kinds.ArtifactGenerator.Kind})
			if err != nil {
				return err
			}
			return t.Write(streams.Out, format)
		},
	}
	cmd.Flags().BoolVar(&compact, "compact", false, "list Flux resources only")
	cmd.Flags().StringVarP(&format, "output", "o", "", "print the tree as json or yaml")
	return cmd
}
