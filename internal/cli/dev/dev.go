// Package dev implements `weir dev`: weir's whole job, locally. It starts a
// control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and a kwok node) on 127.0.0.1, installs weir's CRDs, runs
// weir's controllers in this process, serves the bundled example fleet
// (package examples) from a Git server on 127.0.0.1, bootstraps flux-system
// to sync it, and reports each Kustomization until all are Ready. Then it
// stays up until Ctrl-C, following pushes to the example repository, or
// with --once stops at once. Everything it starts is stopped by PID on the
// way out.
//
// A run owns its folder (--dir) from before it empties it until everything
// it started has stopped, through a lock file (internal/devenv/dirlock): a
// second weir dev on the same folder refuses at once, naming the owner's
// PID, instead of regenerating the certificates under a running cluster.
package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/config/crd"
	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/devenv/controlplane"
	"github.com/weir-gitops/weir/internal/install"
	"github.com/weir-gitops/weir/internal/scheme"
	"github.com/weir-gitops/weir/internal/version"
)

// Options are the flags of `weir dev`.
type Options struct {
	// Dir holds the control plane's state, logs and kubeconfig, the served
	// example repository and its working clone. One run at a time owns it,
	// through the lock file weir-dev.lock (which holds the owner's PID):
	// another run on the same Dir is refused before it touches anything.
	// Once the lock is held, Dir is emptied: every run begins with a fresh
	// cluster.
	Dir string
	// BinDir holds the control plane binaries.
	BinDir string
	// Once stops everything as soon as the example has converged.
	Once bool
	// Controllers are the weir controllers to run in this process
	// (--controllers syntax); none when empty, and then nothing is synced.
	Controllers []string
	// Timeout bounds the wait for the example to converge, first and after
	// each push (default 5m).
	Timeout time.Duration
	// OnReady, when set, is called once the example has converged, before
	// weir dev waits for Ctrl-C (or, with Once, stops). An error ends the run.
	OnReady func(ctx context.Context, res *Result) error
	// OnRollout, when set, is called each time a pushed revision has
	// rolled out, just before weir dev says so: what it reads of the
	// cluster is what "rolled out" meant. An error ends the run.
	OnRollout func(ctx context.Context, res *Result, revision string) error
}

// Result says what a run started, for the caller and for tests.
type Result struct {
	Kubeconfig string
	PIDs       map[string]int
	// Ready is the time from start to control plane, CRDs and controllers up.
	Ready time.Duration
	// Converged is the time from start to every Kustomization Ready.
	Converged time.Duration
	// RepoURL is the example repository's clone URL on 127.0.0.1; Clone is
	// the working clone under Dir.
	RepoURL, Clone string
	// Revision is the revision the example converged at: main@sha1:<sha>.
	Revision string
	// ChartsURL is the example chart repository's URL on 127.0.0.1, which
	// the HelmRepository flux-system/charts points at.
	ChartsURL string
	// ReceiverAddr is the 127.0.0.1 address of the Receiver webhooks,
	// empty when the notification controller does not run: pushes then
	// annotate the GitRepository directly.
	ReceiverAddr string
}

// NewCommand returns `weir dev`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	opts := Options{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run weir's whole job locally: a control plane, the controllers and an example fleet",
		Long: `dev starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a
kwok node (pods become Ready without containers) on 127.0.0.1, installs weir's
CRDs, runs weir's controllers, serves the bundled example fleet from a Git
server on 127.0.0.1 and syncs it into the cluster through a flux-system
GitRepository and Kustomization. It prints each Kustomization as it becomes
Ready, then the tree of what was applied, and stays up until Ctrl-C, rolling
out every push to the example repository. With --once it stops as soon as
everything is Ready (for CI).

One weir dev at a time owns --dir (it holds the lock file weir-dev.lock in
it); a second one on the same folder stops at once and names the first one's
PID.

The kubeconfig it prints works with kubectl and weir. Progress goes to
stderr, the tree to stdout.`,
		Example: `  # Everything, until Ctrl-C
  weir dev

  # In CI: exit 0 once every Kustomization is Ready, non-zero otherwise
  weir dev --once --timeout=10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if deps != nil {
				opts.Timeout = deps.Timeout
			}
			_, err := Run(cmd.Context(), opts, streams)
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", defaultDir(), "directory for the control plane's state, logs, kubeconfig and example repository (emptied at start; one weir dev at a time)")
	cmd.Flags().StringVar(&opts.BinDir, "controlplane-bin", "", "directory with the control plane binaries (default: $WEIR_CONTROLPLANE_BIN or bin/controlplane of the weir checkout)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "stop everything as soon as the example has converged (for CI)")
	cmd.Flags().StringSliceVar(&opts.Controllers, "controllers", []string{"*"}, "weir controllers to run in this process (weir-controller's --controllers syntax)")
	return cmd
}

func defaultDir() string {
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".weir", "dev")
	}
	return filepath.Join(os.TempDir(), "weir-dev")
}

// Run starts the environment, syncs the example, reports progress on
// streams.ErrOut and the tree on streams.Out, and returns when ctx is
// cancelled (Ctrl-C) or, with Once, as soon as the example has converged.
// It stops every process it started before returning.
func Run(ctx context.Context, opts Options, streams genericiooptions.IOStreams) (*Result, error) {
	start := time.Now()
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	// Nothing in the folder is touched before the lock is held, and the
	// lock is released last, once every process using the folder is gone.
	lock, err := claimDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = lock.Release() }()
	out := &lockedWriter{w: streams.ErrOut}
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
	if len(opts.Controllers) == 0 {
		return res, fmt.Errorf("weir dev needs weir's controllers to sync the example: --controllers is empty")
	}
	// If the controllers stop on their own, everything that waits for them
	// ends with their error rather than at its timeout.
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	stopControllers, err := startControllers(ctx, fail, cp, opts, res, out)
	if err != nil {
		return res, err
	}
	defer stopControllers()
	res.Ready = time.Since(start)
	fmt.Fprintf(out, "✔ cluster ready in %s\n", since(start))
	fmt.Fprintf(out, "  kubeconfig: %s\n", res.Kubeconfig)

	return res, syncExample(ctx, c, opts, res, out, streams.Out, start)
}

// syncExample serves the example repository, bootstraps flux-system, waits
// for convergence and, unless Once, follows pushes until ctx ends.
func syncExample(ctx context.Context, c client.Client, opts Options, res *Result, out, data io.Writer, start time.Time) error {
	fmt.Fprintln(out, "► serving the example fleet repository on 127.0.0.1")
	pushes := make(chan struct{}, 1)
	f, err := publishFleet(opts.Dir, func() {
		select {
		case pushes <- struct{}{}:
		default: // one pending notice covers every push before it is handled
		}
	})
	if err != nil {
		return err
	}
	defer f.Close()
	if res.Revision, err = f.Head(); err != nil {
		return err
	}
	res.RepoURL, res.Clone = f.URL(), f.clone
	fmt.Fprintf(out, "✔ example repository at %s (%s), working clone in %s\n", res.RepoURL, res.Revision, res.Clone)
	charts, archives, err := serveCharts(opts.Dir)
	if err != nil {
		return err
	}
	defer func() { _ = charts.Close() }()
	res.ChartsURL = charts.URL()
	fmt.Fprint(out, chartsLine(res.ChartsURL, archives))

	receiver := ""
	if res.ReceiverAddr != "" {
		receiver = fmt.Sprintf(", Receiver %s (called on every push)", receiverName)
	}
	fmt.Fprintf(out, "► creating namespace %s, Secret %s (DEMO ONLY age key), GitRepository and Kustomization %s (path %s)%s\n",
		namespace, ageSecret, syncName, syncPath, receiver)
	syncStart := time.Now()
	if err := bootstrap(ctx, c, res.RepoURL, res.ReceiverAddr != ""); err != nil {
		return err
	}
	if err := createChartsRepository(ctx, c, res.ChartsURL); err != nil {
		return err
	}
	p := newProgress(c, out)
	waitCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	err = p.waitConverged(waitCtx, res.Revision, syncStart)
	cancel()
	if err != nil {
		return fmt.Errorf("the example did not converge: %w", err)
	}
	res.Converged = time.Since(start)
	synced := time.Since(syncStart)
	fmt.Fprintf(out, "✔ every Kustomization is Ready at %s\n", res.Revision)
	fmt.Fprintf(out, "► weir tree kustomization %s\n", syncName)
	if err := printTree(ctx, res.Kubeconfig, data, out); err != nil {
		return fmt.Errorf("weir tree kustomization %s: %w", syncName, err)
	}
	fmt.Fprintf(out, "✔ example synced in %s; %s since weir dev started\n", roundDuration(synced), roundDuration(res.Converged))
	if opts.OnReady != nil {
		if err := opts.OnReady(ctx, res); err != nil {
			return err
		}
	}
	if opts.Once {
		return nil
	}
	printHint(out, res)
	return followPushes(ctx, c, f, p, pushes, res, opts)
}

// printHint tells how to look at the cluster and how to roll out a change.
func printHint(out io.Writer, res *Result) {
	fmt.Fprintf(out, "  kubectl:    export KUBECONFIG=%s; kubectl -n apps get deployments,pods\n", res.Kubeconfig)
	fmt.Fprintf(out, "  try a push: cd %s && echo '  replicas: \"3\"' >> clusters/dev/cluster-vars.yaml && git commit -qam 'dev: three replicas' && git push -q\n", res.Clone)
	fmt.Fprintf(out, "              (or clone %s anywhere); weir dev fetches on every push and shows the rollout\n", res.RepoURL)
	fmt.Fprintln(out, "◎ running; press Ctrl-C to stop")
}

// followPushes prints every change of the sync's objects until ctx ends.
// On each push it asks the GitRepository to fetch at once and, when the
// pushed revision has rolled out everywhere, says how long that took.
func followPushes(ctx context.Context, c client.Client, f *fleet, p *progress, pushes <-chan struct{}, res *Result, opts Options) error {
	fw := &follower{c: c, f: f, p: p, res: res, opts: opts, current: res.Revision}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
				return cause
			}
			return nil
		case <-pushes:
			fw.push(ctx)
		case <-tick.C:
			if err := fw.tick(ctx); err != nil {
				return err
			}
		}
	}
}

// follower is the state of followPushes.
type follower struct {
	c    client.Client
	f    *fleet
	p    *progress
	res  *Result
	opts Options
	// current is the newest revision seen on main; pending the pushed one
	// not rolled out yet, pushed at pushed.
	current, pending string
	pushed           time.Time
}

// push handles a push notice: a new revision on main is fetched at once,
// through the Receiver's webhook when there is one.
func (fw *follower) push(ctx context.Context) {
	rev, err := fw.f.Head()
	if err != nil {
		fw.p.say("✗ reading the pushed revision: %v", err)
		return
	}
	if rev == fw.current || rev == fw.pending {
		return // the first push, or one that did not move main
	}
	fw.pending, fw.pushed, fw.current = rev, time.Now(), rev
	if fw.res.ReceiverAddr != "" {
		fw.p.say("► push received: %s; calling the webhook of Receiver/%s", rev, receiverName)
		if err := callReceiver(ctx, fw.c, fw.res.ReceiverAddr); err != nil {
			fw.p.say("✗ Receiver/%s: %v", receiverName, err)
		}
		return
	}
	fw.p.say("► push received: %s; asking GitRepository/%s to fetch", rev, syncName)
	if err := requestFetch(ctx, fw.c); err != nil {
		fw.p.say("✗ asking GitRepository/%s to fetch: %v", syncName, err)
	}
}

// tick polls the sync's objects and, once the pending revision is in the
// cluster, says so; past the timeout it says what it still waits for.
func (fw *follower) tick(ctx context.Context) error {
	s, err := fw.p.poll(ctx)
	if err != nil || fw.pending == "" {
		return nil
	}
	ok, waiting := s.converged(fw.pending)
	switch {
	case ok:
		took := since(fw.pushed)
		if fw.opts.OnRollout != nil {
			if err := fw.opts.OnRollout(ctx, fw.res, fw.pending); err != nil {
				return err
			}
		}
		fw.p.say("✔ %s rolled out in %s after the push", fw.pending, took)
		fw.pending = ""
	case time.Since(fw.pushed) > fw.opts.Timeout:
		fw.p.say("✗ %s not rolled out after %s: waiting for %s", fw.pending, fw.opts.Timeout, strings.Join(waiting, ", "))
		fw.pending = ""
	default:
		fw.p.waitingNote(waiting, fw.pushed)
	}
	return nil
}

// devPorts are the 127.0.0.1 addresses weir dev gives the controllers'
// servers.
type devPorts struct{ artifacts, receiver, events string }

// pickPorts finds a free port for each of the controllers' servers.
func pickPorts() (devPorts, error) {
	var p devPorts
	for _, port := range []struct {
		into *string
		what string
	}{{&p.artifacts, "the artifact server"}, {&p.receiver, "the webhook receiver"}, {&p.events, "the events server"}} {
		addr, err := freeLocalAddr()
		if err != nil {
			return p, fmt.Errorf("finding a port for %s: %w", port.what, err)
		}
		*port.into = addr
	}
	return p, nil
}

// bound are the ports the selected controllers listen on.
func (p devPorts) bound(selected []string) []string {
	var out []string
	if slices.Contains(selected, "source") || slices.Contains(selected, "source-watcher") {
		out = append(out, p.artifacts)
	}
	if slices.Contains(selected, "notification") {
		out = append(out, p.receiver, p.events)
	}
	return out
}

// controllerOptions is weir-controller's configuration for weir dev, and
// the controllers it selects.
func controllerOptions(opts Options, ports devPorts, logFile io.Writer) (app.Options, []string, error) {
	appOpts := app.DefaultOptions()
	appOpts.Controllers = opts.Controllers
	appOpts.MetricsAddr, appOpts.HealthAddr = "0", "0"
	appOpts.StoragePath = filepath.Join(opts.Dir, "storage")
	appOpts.StorageAddr, appOpts.StorageAdvAddr = ports.artifacts, ports.artifacts
	appOpts.ReceiverAddr = ports.receiver // 127.0.0.1 only
	appOpts.EventsListenAddr = ports.events
	appOpts.LogOutput = logFile
	// Run may be called again in the same process (weir dev's tests do).
	appOpts.SkipNameValidation = true
	selected, err := appOpts.Selected()
	if err != nil {
		return appOpts, nil, err
	}
	if slices.Contains(selected, "kustomize") || slices.Contains(selected, "helm") {
		// The example's infrastructure layer builds from an
		// ExternalArtifact, which Flux's kustomize and helm controllers
		// accept only behind this gate; a cluster running Flux's example
		// repository sets it too.
		if appOpts.FeatureGates == nil {
			appOpts.FeatureGates = map[string]bool{}
		}
		appOpts.FeatureGates["ExternalArtifact"] = true
	}
	if slices.Contains(selected, "notification") {
		// Events reach Alerts as in a cluster, through the events server.
		appOpts.EventsAddr = "http://" + ports.events + "/"
	}
	return appOpts, selected, nil
}

// startControllers runs weir's controllers in this process against the
// local control plane, logging to <dir>/weir-controller.log, with the
// artifact server on a free 127.0.0.1 port. The returned func stops them.
func startControllers(ctx context.Context, fail context.CancelCauseFunc, cp *controlplane.ControlPlane, opts Options, res *Result, out io.Writer) (func(), error) {
	ports, err := pickPorts()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(opts.Dir, "weir-controller.log"))
	if err != nil {
		return nil, fmt.Errorf("creating controller log: %w", err)
	}
	appOpts, selected, err := controllerOptions(opts, ports, logFile)
	if err != nil {
		logFile.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		err := app.Run(runCtx, cp.RESTConfig(), appOpts)
		if runCtx.Err() == nil {
			fail(fmt.Errorf("weir's controllers stopped (logs in %s): %w", logFile.Name(), err))
			err = nil // reported through fail
		}
		done <- err
	}()
	// The ports were free when picked, not reserved: until the controllers
	// listen on them, the servers started next (Git, charts, on port 0)
	// could be given one of them.
	waitListening(ctx, 30*time.Second, ports.bound(selected)...)
	if slices.Contains(selected, "notification") {
		res.ReceiverAddr = ports.receiver
		fmt.Fprintf(out, "✔ controllers running: %s (artifacts at http://%s, webhook receivers at http://%s, logs in %s)\n",
			strings.Join(selected, ", "), ports.artifacts, ports.receiver, logFile.Name())
	} else {
		fmt.Fprintf(out, "✔ controllers running: %s (artifacts at http://%s, logs in %s)\n",
			strings.Join(selected, ", "), ports.artifacts, logFile.Name())
	}
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

// waitListening waits until something accepts connections on each of
// addrs, ctx ends or timeout passes (the controllers then report their own
// failure).
func waitListening(ctx context.Context, timeout time.Duration, addrs ...string) {
	deadline := time.Now().Add(timeout)
	for _, a := range addrs {
		for time.Now().Before(deadline) && ctx.Err() == nil {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err == nil {
				_ = c.Close()
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// freeLocalAddr returns a 127.0.0.1 address no one listens on now.
func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
