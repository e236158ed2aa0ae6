package uninstallcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/install"
)

type options struct {
	keepNamespace bool
	dryRun        bool
	silent        bool
}

// NewCommand returns `weir uninstall`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Uninstall weir and its custom resource definitions",
		Long: `The uninstall command removes weir's finalizers from every weir object,
then deletes the controllers, RBAC, custom resource definitions and the
namespace -n names. The workloads weir applied are left running.`,
		Example: "  # Uninstall, keeping the namespace\n  weir uninstall --keep-namespace\n\n" +
			"  # Uninstall without asking\n  weir uninstall -s",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return run(ctx, o, streams, deps)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.keepNamespace, "keep-namespace", false, "skip namespace deletion")
	f.BoolVar(&o.dryRun, "dry-run", false, "only print the objects that would be deleted")
	f.BoolVarP(&o.silent, "silent", "s", false, "delete components without asking for confirmation")
	return cmd
}

func run(ctx context.Context, o *options, streams genericiooptions.IOStreams, deps *clideps.Deps) error {
	if !o.dryRun && !o.silent {
		if !output.Confirm(streams.In, streams.ErrOut, "Are you sure you want to delete weir and its custom resource definitions?") {
			return fmt.Errorf("aborting")
		}
	}
	c, err := deps.Client()
	if err != nil {
		return err
	}
	p := output.Progress{W: streams.ErrOut}
	suffix := ""
	if o.dryRun {
		suffix = " (dry run)"
	}
	err = install.Uninstall(ctx, c, install.UninstallOptions{
		Namespace:     deps.Namespace(),
		KeepNamespace: o.keepNamespace,
		DryRun:        o.dryRun,
		Timeout:       deps.Timeout,
		Poll:          deps.Poll(),
		Stage:         func(msg string) { p.Actionf("%s", msg) },
		Done:          func(ref, verb string) { p.Successf("%s %s%s", ref, verb, suffix) },
	})
	if err != nil {
		return err
	}
	p.Successf("uninstall finished")
	return nil
}
