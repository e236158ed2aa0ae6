// Package installcmd implements `weir install`: generate weir's manifests
// (internal/install/manifests, embedded in the binary, so it works offline), print
// them with --export, or apply them with server-side apply and wait for the
// controller Deployments, as `flux install` does.
package installcmd
