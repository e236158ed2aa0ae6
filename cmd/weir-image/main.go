// Command weir-image builds weir-controller's container image from a static
// binary, without Docker, and pushes it (--push) or writes an OCI tarball
// (--output). `make image` runs it.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/weir-gitops/weir/internal/install/containerimage"
)

func main() {
	var opts containerimage.Options
	var push, output, tag string
	pflag.StringVar(&opts.Binary, "binary", "bin/linux-amd64/weir-controller", "static weir-controller binary")
	pflag.StringVar(&opts.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM CA bundle to include; empty for none")
	pflag.StringVar(&opts.Version, "version", "v0.0.0-dev", "version label")
	pflag.StringVar(&tag, "tag", "ghcr.io/weir-gitops/weir-controller:v0.0.0-dev", "reference the tarball is tagged with")
	pflag.StringVar(&push, "push", "", "push to this reference (credentials from ~/.docker/config.json)")
	pflag.StringVar(&output, "output", "", "write an OCI tarball to this file")
	pflag.Parse()
	if err := run(opts, push, output, tag); err != nil {
		fmt.Fprintf(os.Stderr, "weir-image: %v\n", err)
		os.Exit(1)
	}
}
