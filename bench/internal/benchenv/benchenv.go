// Package benchenv starts weir's controllers for the benchmarks: the real
// assembly (internal/app.Run) with its artifact storage in a temporary
// directory served on a free port of 127.0.0.1.
package benchenv

import (
	"context"
	"fmt"
	"net"
	"os"

	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/internal/app"
)

// Start runs the controllers weir-controller's defaults select, changed by
// tune, against cfg until ctx ends. Logs below error level are dropped.
func Start(ctx context.Context, cfg *rest.Config, tune func(*app.Options)) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	dir, err := os.MkdirTemp("", "weir-bench-storage-")
	if err != nil {
		return fmt.Errorf("creating the artifact storage: %w", err)
	}
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.HealthAddr, opts.LogLevel = "0", "0", "error"
	opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = dir, addr, addr
	tune(&opts)
	go func() {
		if err := app.Run(ctx, cfg, opts); err != nil {
			fmt.Fprintf(os.Stderr, "controllers: %v\n", err)
		}
		os.RemoveAll(dir)
	}()
	return nil
}
