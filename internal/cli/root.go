package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/dev"
	"github.com/weir-gitops/weir/internal/cli/versioncmd"
)

// DefaultNamespace is where weir (like Flux) lives unless told otherwise.
const DefaultNamespace = "flux-system"

// NewRootCommand returns the weir command with every verb attached.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	kube := genericclioptions.NewConfigFlags(true)
	ns := DefaultNamespace
	if env := os.Getenv("FLUX_SYSTEM_NAMESPACE"); env != "" {
		ns = env
	}
	kube.Namespace = &ns
	deps := &clideps.Deps{Kube: kube}

	root := &cobra.Command{
		Use:           "weir",
		Short:         "weir lets Git through into clusters, in order, verified",
		Long:          "weir is a GitOps toolkit that serves Flux's APIs: the same resources, the same CLI habits.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	kube.AddFlags(root.PersistentFlags())
	root.PersistentFlags().DurationVar(&deps.Timeout, "timeout", deps.DefaultTimeout(), "timeout for this operation")
	root.PersistentFlags().BoolVar(&deps.Verbose, "verbose", false, "print generated objects")

	root.AddCommand(
		dev.NewCommand(streams, deps),
		versioncmd.NewCommand(streams, deps),
	)
	return root
}

// Execute runs weir with args and returns the process exit code. An
// interrupt cancels the command's context so that it can clean up.
func Execute(streams genericiooptions.IOStreams, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRootCommand(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(streams.ErrOut, "✗ %s\n", msg)
		}
		return coded.ExitCode()
	}
	fmt.Fprintf(streams.ErrOut, "✗ %s\n", err)
	return 1
}
