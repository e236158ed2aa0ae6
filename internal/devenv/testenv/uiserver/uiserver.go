package uiserver

import (
	"context"
	"net"
	"testing"

	"github.com/weir-gitops/weir/internal/ui/server"
)

// Running is a UI server started for one test.
type Running struct {
	*server.Server
	// Base is the server's URL, http://127.0.0.1:PORT.
	Base string
	// Port is the port it listens on.
	Port string
}

// Start builds a server from opts and serves it on 127.0.0.1 until the
// test ends; a Serve error at the end fails the test.
func Start(t testing.TB, opts server.Options) *Running {
	t.Helper()
	s, err := server.New(opts)
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
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return &Running{Server: s, Base: "http://127.0.0.1:" + port, Port: port}
}
