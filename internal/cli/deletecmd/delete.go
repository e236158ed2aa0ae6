package deletecmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// NewCommand returns `weir delete`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var silent bool
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete sources and resources",
		Long:  "The delete sub-commands delete sources and resources.",
	}
	cmd.PersistentFlags().BoolVarP(&silent, "silent", "s", false, "delete resource without asking for confirmation")
	kindcmd.AddCommands(cmd, kinds.Reconcilable, "[name]", func(k kinds.Kind) *cobra.Command {
		return &cobra.Command{
			ValidArgsFunction: kindcmd.CompleteNames(deps, k),
			Short:             "Delete a " + k.Kind,
			Long:              fmt.Sprintf("The delete command deletes the given %s from the cluster.", k.Kind),
			Args:              cobra.MaximumNArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return fmt.Errorf("%s name is required", k.Noun)
				}
				ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
				defer cancel()
				return run(ctx, streams, deps, k, args[0], silent)
			},
		}
	})
	return cmd
}

func run(ctx context.Context, streams genericiooptions.IOStreams, deps *clideps.Deps, k kinds.Kind, name string, silent bool) error {
	c, err := deps.Client()
	if err != nil {
		return err
	}
	ns := deps.Namespace()
	u := k.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s not found in %s namespace", k.Kind, name, ns)
		}
		return fmt.Errorf("reading %s %s in %s namespace: %w", k.Kind, name, ns, err)
	}
	if !silent && !output.Confirm(streams.In, streams.ErrOut, "Are you sure you want to delete this "+k.Noun+"?") {
		return errors.New("aborting")
	}
	p := output.Progress{W: streams.ErrOut}
	p.Actionf("deleting %s %s in %s namespace", k.Noun, name, ns)
	if err := c.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s in %s namespace: %w", k.Kind, name, ns, err)
	}
	p.Successf("%s deleted", k.Noun)
	return nil
}
