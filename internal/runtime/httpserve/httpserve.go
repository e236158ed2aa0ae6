// Package httpserve runs the HTTP servers of weir-controller (artifacts,
// Receiver webhooks, events) the same way: listen on an address, serve
// until the context ends, then stop accepting and give requests in flight a
// few seconds to finish.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
)

// ShutdownGrace is how long requests in flight may run once the context
// ends.
const ShutdownGrace = 5 * time.Second

// Options bound one server's connections: zero fields take the value of
// Defaults, negative ones mean no limit.
type Options struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

// Defaults suit small JSON requests and answers.
var Defaults = Options{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      30 * time.Second,
	IdleTimeout:       90 * time.Second,
}

// Serve listens on addr and serves h until ctx ends or serving fails; name
// ("artifact server", "event server"…) prefixes its errors and its log line.
func Serve(ctx context.Context, name, addr string, h http.Handler, log logr.Logger, opts Options) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listening on %s: %w", name, addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: or(opts.ReadHeaderTimeout, Defaults.ReadHeaderTimeout),
		ReadTimeout:       or(opts.ReadTimeout, Defaults.ReadTimeout),
		WriteTimeout:      or(opts.WriteTimeout, Defaults.WriteTimeout),
		IdleTimeout:       or(opts.IdleTimeout, Defaults.IdleTimeout),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info(name+" listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("%s: shutting down: %w", name, err)
	}
	return nil
}

func or(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0 // http.Server: no timeout
	case d > 0:
		return d
	}
	return def
}
