// Package e2e holds end-to-end tests of the weir CLI: weir's own
// controllers (internal/app, as weir-controller runs them) reconcile a Git
// repository served on 127.0.0.1 into a real control plane, and the verbs
// are run against the result. The verb-by-verb golden tests live in
// internal/cli, where controllers are simulated.
package e2e
