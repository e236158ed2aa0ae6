package uicmd

import (
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/ui/server"
)

type options struct {
	port int
	open bool
}

// NewCommand returns `weir ui`. assets are the browser files
// (internal/ui/web's); nil serves the server's placeholder page.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps, assets fs.FS) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web UI on 127.0.0.1 with your kubeconfig",
		Long: "The ui command serves weir's web UI on 127.0.0.1: the fleet overview, the dependency graph and each " +
			"object's page, with reconcile, suspend and resume. Every request runs with your kubeconfig's credentials. " +
			"Open the printed URL: its one-time token logs the browser in.",
		Example: "  # Serve the UI on a free port and open it in the browser\n  weir ui --open\n\n" +
			"  # Serve it on port 9080 for the cluster of another context\n  weir ui --port 9080 --context staging",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return run(c, o, streams, deps, assets)
		},
	}
	cmd.Flags().IntVar(&o.port, "port", 0, "port to listen on at 127.0.0.1 (0: a free one)")
	cmd.Flags().BoolVar(&o.open, "open", false, "open the UI in the desktop's browser (xdg-open)")
	return cmd
}

func run(c *cobra.Command, o *options, streams genericiooptions.IOStreams, deps *clideps.Deps, assets fs.FS) error {
	cfg, err := deps.RESTConfig()
	if err != nil {
		return err
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 300
	}
	srv, err := server.New(server.Options{Mode: server.Local, Config: cfg, Assets: assets, Logger: logger(streams.ErrOut)})
	if err != nil {
		return err
	}
	ln, err := srv.Listen("127.0.0.1:" + strconv.Itoa(o.port))
	if err != nil {
		return err
	}
	url := srv.LoginURL()
	p := output.Progress{W: streams.ErrOut}
	p.Successf("serving the UI for %s at http://%s (Ctrl-C stops it)", cfg.Host, ln.Addr())
	fmt.Fprintln(streams.Out, url)
	if o.open {
		if err := exec.Command("xdg-open", url).Start(); err != nil {
			p.Failuref("could not open a browser (%v): open the URL above", err)
		}
	}
	return srv.Serve(c.Context(), ln)
}

// logger writes the server's own lines (logins, Events it could not
// record) to w; its request log stays quiet.
func logger(w io.Writer) logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(w, prefix, args) }, funcr.Options{})
}
