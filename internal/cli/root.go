package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/weir-gitops/weir/internal/cli/bootstrapcmd"
	"github.com/weir-gitops/weir/internal/cli/buildcmd"
	"github.com/weir-gitops/weir/internal/cli/checkcmd"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/completioncmd"
	"github.com/weir-gitops/weir/internal/cli/createcmd"
	"github.com/weir-gitops/weir/internal/cli/debugcmd"
	"github.com/weir-gitops/weir/internal/cli/deletecmd"
	"github.com/weir-gitops/weir/internal/cli/dev"
	"github.com/weir-gitops/weir/internal/cli/diffcmd"
	"github.com/weir-gitops/weir/internal/cli/envsubstcmd"
	"github.com/weir-gitops/weir/internal/cli/eventscmd"
	"github.com/weir-gitops/weir/internal/cli/exportcmd"
	"github.com/weir-gitops/weir/internal/cli/getcmd"
	"github.com/weir-gitops/weir/internal/cli/installcmd"
	"github.com/weir-gitops/weir/internal/cli/lintcmd"
	"github.com/weir-gitops/weir/internal/cli/listcmd"
	"github.com/weir-gitops/weir/internal/cli/logscmd"
	"github.com/weir-gitops/weir/internal/cli/migratecmd"
	"github.com/weir-gitops/weir/internal/cli/plugincmd"
	"github.com/weir-gitops/weir/internal/cli/pullcmd"
	"github.com/weir-gitops/weir/internal/cli/pushcmd"
	"github.com/weir-gitops/weir/internal/cli/reconcilecmd"
	"github.com/weir-gitops/weir/internal/cli/resumecmd"
	"github.com/weir-gitops/weir/internal/cli/statscmd"
	"github.com/weir-gitops/weir/internal/cli/suspendcmd"
	"github.com/weir-gitops/weir/internal/cli/tagcmd"
	"github.com/weir-gitops/weir/internal/cli/tracecmd"
	"github.com/weir-gitops/weir/internal/cli/treecmd"
	"github.com/weir-gitops/weir/internal/cli/triggercmd"
	"github.com/weir-gitops/weir/internal/cli/uicmd"
	"github.com/weir-gitops/weir/internal/cli/uninstallcmd"
	"github.com/weir-gitops/weir/internal/cli/versioncmd"
	"github.com/weir-gitops/weir/internal/ui/web"
)

// DefaultNamespace is where weir (like Flux) lives unless told otherwise.
const DefaultNamespace = "flux-system"

// Option adjusts the dependencies of the commands before they run; tests
// use it to fix the clock and shorten polling.
type Option func(*clideps.Deps)

// NewRootCommand returns the weir command with every verb attached.
func NewRootCommand(streams genericiooptions.IOStreams, opts ...Option) *cobra.Command {
	kube := genericclioptions.NewConfigFlags(true)
	ns := DefaultNamespace
	if env := os.Getenv("FLUX_SYSTEM_NAMESPACE"); env != "" {
		ns = env
	}
	kube.Namespace = &ns
	deps := &clideps.Deps{Kube: kube}
	for _, o := range opts {
		o(deps)
	}

	root := &cobra.Command{
		Use:           "weir",
		Short:         "weir lets Git through into clusters, in order, verified",
		Long:          "weir is a GitOps toolkit that serves Flux's APIs: the same resources, the same CLI habits.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// weir has its own `completion` verb, with flux's subcommands.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	// kubectl's --server has the shorthand -s, which `delete` needs for
	// --silent (as in the flux CLI): --server is added without it.
	server := ""
	kube.APIServer = nil
	kube.AddFlags(root.PersistentFlags())
	kube.APIServer = &server
	root.PersistentFlags().StringVar(kube.APIServer, "server", "", "the address and port of the Kubernetes API server")
	root.PersistentFlags().DurationVar(&deps.Timeout, "timeout", deps.DefaultTimeout(), "timeout for this operation")
	root.PersistentFlags().BoolVar(&deps.Verbose, "verbose", false, "print generated objects")
	root.PersistentFlags().Float32Var(&deps.QPS, "kube-api-qps", clideps.DefaultQPS, "the maximum queries-per-second of requests sent to the Kubernetes API")
	root.PersistentFlags().IntVar(&deps.Burst, "kube-api-burst", clideps.DefaultBurst, "the maximum burst queries-per-second of requests sent to the Kubernetes API")
	root.PersistentFlags().BoolVar(&deps.NamespaceFollowsContext, "ns-follows-kube-context", false, "if true, the namespace is the current kubeconfig context's, unless --namespace is given")
	deps.NamespaceChanged = func() bool { return root.PersistentFlags().Changed("namespace") }

	root.AddCommand(
		buildcmd.NewCommand(streams, deps),
		checkcmd.NewCommand(streams, deps),
		completioncmd.NewCommand(streams, deps),
		createcmd.NewCommand(streams, deps),
		debugcmd.NewCommand(streams, deps),
		deletecmd.NewCommand(streams, deps),
		dev.NewCommand(streams, deps),
		diffcmd.NewCommand(streams, deps),
		envsubstcmd.NewCommand(streams, deps),
		eventscmd.NewCommand(streams, deps),
		exportcmd.NewCommand(streams, deps),
		getcmd.NewCommand(streams, deps),
		installcmd.NewCommand(streams, deps),
		lintcmd.NewCommand(streams, deps),
		bootstrapcmd.NewCommand(streams, deps),
		listcmd.NewCommand(streams, deps),
		logscmd.NewCommand(streams, deps),
		migratecmd.NewCommand(streams, deps),
		plugincmd.NewCommand(streams, deps),
		pullcmd.NewCommand(streams, deps),
		pushcmd.NewCommand(streams, deps),
		reconcilecmd.NewCommand(streams, deps),
		resumecmd.NewCommand(streams, deps),
		statscmd.NewCommand(streams, deps),
		suspendcmd.NewCommand(streams, deps),
		tagcmd.NewCommand(streams, deps),
		tracecmd.NewCommand(streams, deps),
		treecmd.NewCommand(streams, deps),
		triggercmd.NewCommand(streams, deps),
		// nil until internal/ui/web is merged: then web.FS().
		uicmd.NewCommand(streams, deps, web.FS()),
		uninstallcmd.NewCommand(streams, deps),
		versioncmd.NewCommand(streams, deps),
	)
	// Plugins come last: no builtin may be shadowed by one.
	plugincmd.Register(root, streams)
	return root
}

// Execute runs weir with args and returns the process exit code. An
// interrupt cancels the command's context so that it can clean up.
func Execute(streams genericiooptions.IOStreams, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// client-go logs through klog, for instance when Ctrl-C cuts a watch
	// short; a person reading weir's output has no use for those lines.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	return ExecuteContext(ctx, streams, args)
}

// ExecuteContext runs weir with args until ctx ends and returns the exit
// code: 0 on success, the code an error carries (ExitCode() int), else 1.
// Errors are printed on stderr after ✗.
func ExecuteContext(ctx context.Context, streams genericiooptions.IOStreams, args []string, opts ...Option) int {
	root := NewRootCommand(streams, opts...)
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
