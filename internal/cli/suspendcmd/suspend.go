package suspendcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// ReasonAnnotation records why an object was suspended (--reason), under
// the key the flux CLI uses.
const ReasonAnnotation = meta.SuspendReasonAnnotation

type options struct {
	all    bool
	reason string
}

// NewCommand returns `weir suspend`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "suspend",
		Short: "Suspend resources",
		Long:  "The suspend sub-commands suspend the reconciliation of a resource.",
	}
	cmd.PersistentFlags().BoolVar(&o.all, "all", false, "suspend all resources in that namespace")
	cmd.PersistentFlags().StringVarP(&o.reason, "reason", "r", "",
		"why the resource is suspended, recorded in the "+ReasonAnnotation+" annotation")
	kindcmd.AddCommands(cmd, kinds.Reconcilable, "[name]...", func(k kinds.Kind) *cobra.Command {
		return &cobra.Command{
			ValidArgsFunction: kindcmd.CompleteNames(deps, k),
			Short:             "Suspend reconciliation of " + k.Kind + " objects",
			Example: fmt.Sprintf("  # Suspend one %[1]s, then two\n  weir suspend %[2]s podinfo\n  weir suspend %[2]s podinfo-1 podinfo-2",
				k.Kind, k.CommandPath()),
			RunE: func(c *cobra.Command, args []string) error {
				ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
				defer cancel()
				return run(ctx, o, streams, deps, k, args)
			},
		}
	})
	return cmd
}

func run(ctx context.Context, o *options, streams genericiooptions.IOStreams, deps *clideps.Deps, k kinds.Kind, args []string) error {
	if len(args) == 0 && !o.all {
		return fmt.Errorf("%s name is required", k.Noun)
	}
	c, err := deps.Client()
	if err != nil {
		return err
	}
	ns := deps.Namespace()
	p := output.Progress{W: streams.ErrOut}
	failed, err := ForEach(ctx, c, p, k, ns, args, func(u *unstructured.Unstructured) bool {
		p.Actionf("suspending %s %s in %s namespace", k.Noun, u.GetName(), ns)
		patch := client.MergeFrom(u.DeepCopy())
		kinds.SetSuspended(u, true)
		if o.reason != "" {
			ann := u.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[ReasonAnnotation] = o.reason
			u.SetAnnotations(ann)
		}
		if err := c.Patch(ctx, u, patch); err != nil {
			p.Failuref("failed suspending %s %s in %s namespace: %v", k.Kind, u.GetName(), ns, err)
			return false
		}
		p.Successf("%s suspended", k.Noun)
		return true
	})
	if err != nil {
		return err
	}
	if failed {
		return output.Reported
	}
	return nil
}

// ForEach calls fn, in order, on each object named in args (each name
// once), or on every object of the kind in ns when args is empty. A name
// that does not exist is reported on p, as is any object for which fn
// returns false; either makes failed true. An empty namespace with no names
// is an error.
func ForEach(ctx context.Context, c client.Client, p output.Progress, k kinds.Kind, ns string, args []string,
	fn func(*unstructured.Unstructured) bool) (failed bool, err error) {
	if len(args) == 0 {
		list := k.NewList()
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, fmt.Errorf("listing %s objects in %s namespace: %w", k.Kind, ns, err)
		}
		if len(list.Items) == 0 {
			return false, fmt.Errorf("no %s objects found in %s namespace", k.Kind, ns)
		}
		for i := range list.Items {
			if !fn(&list.Items[i]) {
				failed = true
			}
		}
		return failed, nil
	}
	seen := map[string]bool{}
	for _, name := range args {
		if seen[name] {
			continue
		}
		seen[name] = true
		u := k.New()
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			if apierrors.IsNotFound(err) {
				p.Failuref("%s %s not found in %s namespace", k.Kind, name, ns)
			} else {
				p.Failuref("failed reading %s %s in %s namespace: %v", k.Kind, name, ns, err)
			}
			failed = true
			continue
		}
		if !fn(u) {
			failed = true
		}
	}
	return failed, nil
}
