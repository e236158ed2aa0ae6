package cli_test

import "runtime"

const (
	runtimeOS   = runtime.GOOS
	runtimeArch = runtime.GOARCH
)
