package browsertest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/internal/ui/server"
	"github.com/weir-gitops/weir/internal/ui/web"
)

// ui is one `weir ui` (local mode) for the user of a config.
type ui struct {
	srv  *server.Server
	base string
}

// startUI serves the embedded UI in local mode with cfg as the user's
// kubeconfig, as `weir ui` does, until the test ends.
func startUI(t *testing.T, cfg *rest.Config) *ui {
	t.Helper()
	s, err := server.New(server.Options{Mode: server.Local, Config: cfg, Assets: web.FS()})
	if err != nil {
		t.Fatalf("starting the UI server: %v", err)
	}
	ln, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("UI server: %v", err)
		}
	})
	return &ui{srv: s, base: "http://" + ln.Addr().String()}
}

// login opens the one-time login URL in the browser, which leaves a session
// cookie behind, as the link `weir ui` prints does.
func (b *browser) login(u *ui) {
	b.t.Helper()
	b.base = u.base
	b.do("opening the login URL", chromedp.Navigate(u.srv.LoginURL()))
	b.waitJS("the overview after the login", `document.getElementById('main')?.dataset.loaded === 'true'`, 30*time.Second)
}
