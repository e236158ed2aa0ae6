// Package version holds weir's version, stamped at build time with
// -ldflags "-X github.com/weir-gitops/weir/internal/version.Version=v1.2.3".
package version

// Version is weir's release version; "v0.0.0-dev" for local builds.
var Version = "v0.0.0-dev"
