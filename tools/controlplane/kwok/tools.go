//go:build tools

// Package kwok pins sigs.k8s.io/kwok, the fake kubelet that makes pods on a
// node without containers reach Ready.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
