// Package dev implements `weir dev`: a local control plane (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and a kwok node) on
// 127.0.0.1 with weir's CRDs installed, kept up until Ctrl-C, or torn down
// at once with --once. Everything it starts is stopped by PID on the way out.
package dev

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/config/crd"
	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/controlplane"
	"github.com/weir-gitops/weir/internal/install"
	"github.com/weir-gitops/weir/internal/scheme"
	"github.com/weir-gitops/weir/internal/version"
)

// Options are the flags of `weir dev`.
type Options struct {
	// Dir holds the control plane's state, logs and kubeconfig. It is
	// emptied at start: every run begins with a fresh cluster.
	Dir string
	// BinDir holds the control plane binaries.
	BinDir string
	// Once stops everything as soon as the environment is ready.
	Once bool
	// Controllers are the weir controllers to run in this process
	// (--controllers syntax); none when empty.
	Controllers []string
}

// Result says what a run started, for the caller and for tests.
type Result struct {
	Kubeconfig string
	PIDs       map[string]int
	Ready      time.Duration
}

// NewCommand returns `weir dev`.
func NewCommand(streams genericiooptions.IOStreams, _ *clideps.Deps) *cobra.Command {
	opts := Options{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run weir locally: a real control plane on 127.0.0.1 with weir's CRDs",
		Long: `dev starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a
kwok node (pods become Ready without containers) on 127.0.0.1, installs weir's
CRDs, prints a kubeconfig path for kubectl and weir, and stays up until Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := Run(cmd.Context(), opts, streams.ErrOut)
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", defaultDir(), "directory for the control plane's state, logs and kubeconfig (emptied at start)")
	cmd.Flags().StringVar(&opts.BinDir, "controlplane-bin", "", "directory with the control plane binaries (default: $WEIR_CONTROLPLANE_BIN or bin/controlplane of the weir checkout)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "stop everything as soon as the environment is ready (for CI)")
	cmd.Flags().StringSliceVar(&opts.Controllers, "controllers", []string{"*"}, "weir controllers to run in this process (weir-controller's --controllers syntax; empty for none)")
	return cmd
}

func defaultDir() string {
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".weir", "dev")
	}
	return filepath.Join(os.TempDir(), "weir-dev")
}

// Run starts the environment, reports progress to out, and returns when ctx
// is cancelled (Ctrl-C) or, with Once, as soon as everything is ready. It
// stops every process it started before returning.
func Run(ctx context.Context, opts Options, out io.Writer) (*Result, error) {
	start := time.Now()
	if err := os.RemoveAll(opts.Dir); err != nil {
		return nil, fmt.Errorf("cleaning %s: %w", opts.Dir, err)
	}
	fmt.Fprintf(out, "► starting a local control plane in %s (weir %s)\n", opts.Dir, version.Version)
	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: opts.BinDir, Dir: opts.Dir})
	if err != nil {
		return nil, err
	}
	res := &Result{Kubeconfig: cp.KubeconfigPath(), PIDs: cp.PIDs()}
	defer func() {
		fmt.Fprintf(out, "► stopping %s\n", describePIDs(res.PIDs))
		cp.Stop()
		fmt.Fprintln(out, "✔ stopped every process weir dev started")
	}()
	fmt.Fprintf(out, "✔ control plane ready at %s in %s\n", cp.APIServerURL(), since(start))

	fmt.Fprintln(out, "► installing weir's CRDs")
	s, err := scheme.New()
	if err != nil {
		return res, err
	}
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: s})
	if err != nil {
		return res, fmt.Errorf("connecting to the control plane: %w", err)
	}
	if err := install.CRDs(ctx, c, crd.Options{Version: version.Version, Instance: "flux-system"}, time.Minute); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "✔ CRDs established in %s\n", since(start))
	if len(opts.Controllers) > 0 {
		stopControllers, err := startControllers(ctx, cp, opts, out)
		if err != nil {
			return res, err
		}
		defer stopControllers()
	}
	res.Ready = time.Since(start)
	fmt.Fprintf(out, "✔ ready in %s\n", since(start))
	fmt.Fprintf(out, "  kubeconfig: %s\n", res.Kubeconfig)
	fmt.Fprintf(out, "  try:        export KUBECONFIG=%s; kubectl get crds -l app.kubernetes.io/part-of=flux\n", res.Kubeconfig)
	if opts.Once {
		return res, nil
	}
	fmt.Fprintln(out, "◎ running; press Ctrl-C to stop")
	<-ctx.Done()
	return res, nil
}

// startControllers runs weir's controllers in this process against the
// local control plane, logging to <dir>/weir-controller.log, with the
// artifact server on a free 127.0.0.1 port. The returned func stops them.
func startControllers(ctx context.Context, cp *controlplane.ControlPlane, opts Options, out io.Writer) (func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a port for the artifact server: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	logFile, err := os.Create(filepath.Join(opts.Dir, "weir-controller.log"))
	if err != nil {
		return nil, fmt.Errorf("creating controller log: %w", err)
	}
	appOpts := app.DefaultOptions()
	appOpts.Controllers = opts.Controllers
	appOpts.MetricsAddr, appOpts.HealthAddr = "0", "0"
	appOpts.StoragePath = filepath.Join(opts.Dir, "storage")
	appOpts.StorageAddr, appOpts.StorageAdvAddr = addr, addr
	appOpts.LogOutput = logFile
	selected, err := appOpts.Selected()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- app.Run(runCtx, cp.RESTConfig(), appOpts) }()
	fmt.Fprintf(out, "✔ controllers running: %s (artifacts at http://%s, logs in %s)\n",
		strings.Join(selected, ", "), addr, logFile.Name())
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(out, "✗ controllers: %v\n", err)
		}
		logFile.Close()
	}, nil
}

func since(t time.Time) string { return time.Since(t).Round(10 * time.Millisecond).String() }

func describePIDs(pids map[string]int) string {
	names := make([]string, 0, len(pids))
	for n := range pids {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s (pid %d)", n, pids[n]))
	}
	return strings.Join(parts, ", ")
}
