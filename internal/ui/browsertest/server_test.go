package browsertest

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/internal/devenv/testenv/uiserver"
	"github.com/weir-gitops/weir/internal/ui/server"
	"github.com/weir-gitops/weir/internal/ui/web"
)

// startUI serves the embedded UI in local mode with cfg as the user's
// kubeconfig, as `weir ui` does, until the test ends.
func startUI(t *testing.T, cfg *rest.Config) *uiserver.Running {
	t.Helper()
	return uiserver.Start(t, server.Options{Mode: server.Local, Config: cfg, Assets: web.FS()})
}

// newPagedUI is newUI with the overview's table served pageSize rows at a
// time, so that the fleet of four fills two pages.
func newPagedUI(t *testing.T, cfg *rest.Config, pageSize int) *browser {
	t.Helper()
	b := launch(t)
	b.login(uiserver.Start(t, server.Options{Mode: server.Local, Config: cfg, Assets: web.FS(), PageSize: pageSize}))
	return b
}

// login opens the one-time login URL in the browser, which leaves a session
// cookie behind, as the link `weir ui` prints does.
func (b *browser) login(u *uiserver.Running) {
	b.t.Helper()
	b.base = u.Base
	b.do("opening the login URL", chromedp.Navigate(u.LoginURL()))
	b.waitJS("the overview after the login", `document.getElementById('main')?.dataset.loaded === 'true'`, 30*time.Second)
}
