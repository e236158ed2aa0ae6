package app

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/internal/ui/server"
	"github.com/weir-gitops/weir/internal/ui/web"
)

// setupUI serves the web UI in cluster mode on --ui-addr: people log in
// with a Kubernetes token and every request impersonates them, so the
// process's ServiceAccount needs only TokenReviews, impersonation and
// Events (the ui component's ClusterRole).
func setupUI(_ context.Context, deps *Deps) error {
	opts := deps.Options
	assets := opts.UIAssets
	if assets == nil {
		assets = web.FS()
	}
	srv, err := server.New(server.Options{
		Mode: server.Cluster, Config: deps.Manager.GetConfig(), Assets: assets,
		Logger: ctrl.Log.WithName("ui"), SecureCookies: opts.UISecureCookies,
	})
	if err != nil {
		return err
	}
	return deps.Manager.Add(uiRunnable{srv: srv, addr: opts.UIAddr})
}

// uiRunnable serves the UI on every replica, leader or not.
type uiRunnable struct {
	srv  *server.Server
	addr string
}

func (r uiRunnable) Start(ctx context.Context) error {
	ln, err := r.srv.Listen(r.addr)
	if err != nil {
		return err
	}
	return r.srv.Serve(ctx, ln)
}

func (uiRunnable) NeedLeaderElection() bool { return false }
