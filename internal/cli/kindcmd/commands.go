// Package kindcmd lays the per-kind subcommands of a verb out as the flux CLI
// does and completes object names for them; the kinds themselves are
// internal/view/kinds, shared with the UI.
package kindcmd

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// AddCommands attaches to parent one subcommand per kind of set, built by
// build, laid out as the flux CLI does: sources below a `source` command
// (`suspend source git NAME`), image kinds below `image` (`suspend image
// policy NAME`), the others directly (`suspend kustomization NAME`, alias
// ks). build gets the kind and returns a command without Use;
// AddCommands names it, with args appended to Use for help.
func AddCommands(parent *cobra.Command, set []kinds.Kind, args string, build func(kinds.Kind) *cobra.Command) {
	groups := map[string]*cobra.Command{}
	for _, k := range set {
		c := build(k)
		c.Use = k.Use + " " + args
		c.Aliases = k.Aliases
		name := k.Parent()
		if name == "" {
			parent.AddCommand(c)
			continue
		}
		group := groups[name]
		if group == nil {
			group = &cobra.Command{Use: name, Short: parent.Short + ": " + groupShort[name]}
			groups[name] = group
			parent.AddCommand(group)
		}
		group.AddCommand(c)
	}
}

var groupShort = map[string]string{"source": "sources", "image": "image automation objects"}

// CompleteNames completes the names of the objects of kind k in the
// namespace the flags select, for shell completion of [name] arguments.
// Errors complete nothing.
func CompleteNames(deps *clideps.Deps, k kinds.Kind) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cl, err := deps.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(c.Context(), 5*time.Second)
		defer cancel()
		list := k.NewList()
		if err := cl.List(ctx, list, client.InNamespace(deps.Namespace())); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, u := range list.Items {
			if strings.HasPrefix(u.GetName(), prefix) && !slices.Contains(args, u.GetName()) {
				names = append(names, u.GetName())
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
