package controllers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// pollInterval is how often the Deployment of Options.Deployment is read:
// short enough that the controllers stop about when a kubelet would stop
// the pods.
const pollInterval = 20 * time.Millisecond

// Options says which controllers run and for how long.
type Options struct {
	// Controllers are --controllers values: "source", "kustomize", "*".
	Controllers []string
	// Deployment, when set, ties the controllers to that Deployment as its
	// pods would be: they start once it exists and stop, for good, once it
	// is deleted or being deleted. Unset, they start at once and run until
	// stopped.
	Deployment client.ObjectKey
}

// Running is one start of the controllers.
type Running struct {
	// StorageAddr is the 127.0.0.1 host:port the source controller serves
	// artifacts on (and writes into artifact URLs); empty when the source
	// controller is not among those started.
	StorageAddr string
	// ReceiverAddr is the 127.0.0.1 host:port of the Receiver webhook
	// server, and EventsAddr that of the events server the controllers
	// send their events to; empty when the notification controller is
	// not started.
	ReceiverAddr, EventsAddr string

	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Start runs the controllers against env in the background until ctx ends,
// Stop is called, or Options.Deployment goes away. It works where no test
// exists yet (testenv's Options.Setup); inside a test, Run is shorter.
//
// The controllers run with weir-controller's defaults except: no metrics or
// health listeners, retries after 100ms growing to 1s (so failure paths
// converge in a test's time), controller names allowed to repeat in the
// process (SkipNameValidation), and artifacts stored in a temporary
// directory (removed when the controllers stop) and served on a free port of
// 127.0.0.1, as are Receiver webhooks when the notification controller
// runs. Those ports are found by listening and closing, since app.Run
// binds the address itself; another process could take it in between.
//
// Logs go to a buffer shared by the process, whose end Run prints when a
// test fails: controller-runtime takes the logger of the first start only,
// so a per-start destination would be ignored from the second on.
func Start(ctx context.Context, env *testenv.Env, opts Options) (*Running, error) {
	o := app.DefaultOptions()
	o.Controllers = opts.Controllers
	o.MetricsAddr, o.HealthAddr = "0", "0"
	o.MinRetryDelay, o.MaxRetryDelay = 100*time.Millisecond, time.Second
	o.SkipNameValidation = true
	o.LogOutput = logs
	selected, err := o.Selected()
	if err != nil {
		return nil, err
	}
	r := &Running{done: make(chan struct{})}
	var dir string
	o.ReceiverAddr, o.EventsListenAddr = "0", "0"
	if slices.Contains(selected, "notification") {
		if r.ReceiverAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		if r.EventsAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		o.ReceiverAddr, o.EventsListenAddr = r.ReceiverAddr, r.EventsAddr
		o.EventsAddr = "http://" + r.EventsAddr + "/"
	}
	if slices.Contains(selected, "source") || slices.Contains(selected, "image-reflector") {
		// Artifacts and tag lists.
		if dir, err = os.MkdirTemp("", "weir-controllers-"); err != nil {
			return nil, err
		}
		o.StoragePath = filepath.Join(dir, "storage")
	}
	if slices.Contains(selected, "source") {
		if r.StorageAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		o.StorageAddr, o.StorageAdvAddr = r.StorageAddr, r.StorageAddr
	}
	ctx, r.cancel = context.WithCancel(ctx)
	go func() {
		defer close(r.done)
		defer r.cancel()
		if dir != "" {
			defer os.RemoveAll(dir)
		}
		if r.err = r.run(ctx, env, o, opts.Deployment); r.err != nil {
			// Said here too, for starts from TestMain that nobody stops.
			fmt.Fprintf(os.Stderr, "testenv: controllers %s stopped: %v\n", strings.Join(selected, ","), r.err)
		}
	}()
	return r, nil
}

// run waits for the Deployment (if any), then runs app.Run until ctx ends
// or the Deployment goes.
func (r *Running) run(ctx context.Context, env *testenv.Env, o app.Options, deploy client.ObjectKey) error {
	if deploy.Name != "" {
		if err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
			live, _ := deploymentLive(ctx, env, deploy)
			return live, nil
		}); err != nil {
			return nil // stopped before the Deployment appeared: nothing ran
		}
		go func() {
			_ = wait.PollUntilContextCancel(ctx, pollInterval, false, func(ctx context.Context) (bool, error) {
				live, known := deploymentLive(ctx, env, deploy)
				return known && !live, nil
			})
			r.cancel()
		}()
	}
	if err := app.Run(ctx, env.Config, o); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// deploymentLive reports whether the Deployment exists and is not being
// deleted; known is false when the API server could not say.
func deploymentLive(ctx context.Context, env *testenv.Env, key client.ObjectKey) (live, known bool) {
	var d appsv1.Deployment
	err := env.Client.Get(ctx, key, &d)
	switch {
	case apierrors.IsNotFound(err):
		return false, true
	case err != nil:
		return false, false
	}
	return d.DeletionTimestamp == nil, true
}

// Stop stops the controllers, waits until they have, and returns what made
// them fail, if anything did. Calling it again returns the same.
func (r *Running) Stop() error {
	r.cancel()
	<-r.done
	return r.err
}

// Done is closed once the controllers have stopped, whatever stopped them,
// and their storage is removed.
func (r *Running) Done() <-chan struct{} { return r.done }

// Run is Start for one test: against testenv's shared environment, stopped
// when t ends, failing t if they ended in error, and printing the end of the
// controllers' log if t failed.
func Run(t testing.TB, opts Options) *Running {
	t.Helper()
	r, err := Start(context.Background(), testenv.Get(t), opts)
	if err != nil {
		t.Fatalf("starting controllers: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() { // before Stop, whose shutdown lines would crowd out the story
			t.Logf("controller log, last %d lines:\n%s", tailLines, logs.last(tailLines))
		}
		if err := r.Stop(); err != nil {
			t.Errorf("controllers: %v", err)
		}
	})
	return r
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
