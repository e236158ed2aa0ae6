package resumecmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/cli/suspendcmd"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

type options struct {
	all  bool
	wait bool
}

// NewCommand returns `weir resume`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Resume suspended resources",
		Long:  "The resume sub-commands resume a suspended resource.",
	}
	cmd.PersistentFlags().BoolVar(&o.all, "all", false, "resume all resources in that namespace")
	cmd.PersistentFlags().BoolVar(&o.wait, "wait", false,
		"wait for the resumed resources to be reconciled (the default when exactly one name is given)")
	kindcmd.AddCommands(cmd, kinds.Reconcilable, "[name]...", func(k kinds.Kind) *cobra.Command {
		return &cobra.Command{
			ValidArgsFunction: kindcmd.CompleteNames(deps, k),
			Short:             "Resume a suspended " + k.Kind,
			Long: fmt.Sprintf("The resume command marks previously suspended %s objects for reconciliation and, "+
				"with --wait or a single name, waits for them to be reconciled.", k.Kind),
			RunE: func(c *cobra.Command, args []string) error {
				// As the flux CLI: one name waits unless --wait=false; several
				// names or --all wait only when asked.
				wait := len(args) == 1
				if c.Flags().Changed("wait") {
					wait = o.wait
				}
				ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
				defer cancel()
				return run(ctx, o, wait, streams, deps, k, args)
			},
		}
	})
	return cmd
}

func run(ctx context.Context, o *options, wait bool, streams genericiooptions.IOStreams, deps *clideps.Deps, k kinds.Kind, args []string) error {
	if len(args) == 0 && !o.all {
		return fmt.Errorf("%s name is required", k.Noun)
	}
	c, err := deps.Client()
	if err != nil {
		return err
	}
	ns := deps.Namespace()
	p := output.Progress{W: streams.ErrOut}
	var resumed []*unstructured.Unstructured
	failed, err := suspendcmd.ForEach(ctx, c, p, k, ns, args, func(u *unstructured.Unstructured) bool {
		p.Actionf("resuming %s %s in %s namespace", k.Noun, u.GetName(), ns)
		patch := client.MergeFrom(u.DeepCopy())
		kinds.SetSuspended(u, false)
		if ann := u.GetAnnotations(); ann[suspendcmd.ReasonAnnotation] != "" {
			delete(ann, suspendcmd.ReasonAnnotation)
			u.SetAnnotations(ann)
		}
		if err := c.Patch(ctx, u, patch); err != nil {
			p.Failuref("failed resuming %s %s in %s namespace: %v", k.Kind, u.GetName(), ns, err)
			return false
		}
		p.Successf("%s resumed", k.Noun)
		resumed = append(resumed, u)
		return true
	})
	if err != nil {
		return err
	}
	if wait {
		for _, u := range resumed {
			p.Waitingf("waiting for %s reconciliation", k.Kind)
			ready, err := k.WaitReady(ctx, c, client.ObjectKeyFromObject(u), deps.Poll())
			if err != nil {
				p.Failuref("%v", err)
				failed = true
				continue
			}
			p.Successf("%s %s reconciliation completed", k.Kind, u.GetName())
			p.Successf("%s", k.SuccessMessage(ready))
		}
	}
	if failed {
		return output.Reported
	}
	return nil
}
