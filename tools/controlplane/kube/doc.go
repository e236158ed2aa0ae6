// Package kube holds nothing but the build recipe for the Kubernetes control
// plane binaries used by weir's tests and by `weir dev`.
package kube
