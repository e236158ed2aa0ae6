package completioncmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
)

// NewCommand returns `weir completion`.
func NewCommand(streams genericiooptions.IOStreams, _ *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion",
		Short: "Generates completion scripts for various shells",
		Long:  "The completion sub-command generates completion scripts for various shells.",
	}
	shells := []struct {
		name, example string
		gen           func(root *cobra.Command) error
	}{
		{"bash", "  # To load completion in the current bash shell\n  . <(weir completion bash)",
			func(r *cobra.Command) error { return r.GenBashCompletionV2(streams.Out, true) }},
		{"zsh", "  # To load completion in the current zsh shell\n  source <(weir completion zsh) && compdef _weir weir",
			func(r *cobra.Command) error { return r.GenZshCompletion(streams.Out) }},
		{"fish", "  # To load completion in the current fish shell\n  weir completion fish | source",
			func(r *cobra.Command) error { return r.GenFishCompletion(streams.Out, true) }},
		{"powershell", "  # To load completion in the current PowerShell session\n  weir completion powershell | Out-String | Invoke-Expression",
			func(r *cobra.Command) error { return r.GenPowerShellCompletionWithDesc(streams.Out) }},
	}
	for _, s := range shells {
		cmd.AddCommand(&cobra.Command{
			Use:     s.name,
			Short:   "Generates " + s.name + " completion scripts",
			Example: s.example,
			Args:    cobra.NoArgs,
			RunE:    func(c *cobra.Command, _ []string) error { return s.gen(c.Root()) },
		})
	}
	return cmd
}
