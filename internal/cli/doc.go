// Package cli assembles the weir command line: the root command, the global
// kubectl-style flags, and one subpackage per verb (internal/cli/<verb>cmd),
// each exposing NewCommand(streams, deps). No package-level flag variables:
// every command is built fresh, so tests run commands side by side.
//
// Shared pieces: kinds is the registry of Flux kinds the verbs are built
// from (nouns, revisions, Flux's readiness rule); output holds the progress
// glyphs, Flux's table layout and the kubectl -o formats; clitest runs the
// CLI against internal/devenv/testenv for golden tests.
//
// # Output and exit codes
//
// Progress goes to stderr (► action, ◎ waiting, ✔ done, ✗ failed), data to
// stdout. Messages are the flux CLI's, word for word, where Flux has one.
// Exit codes: 0 success; 1 failure, reported after ✗. weir differs from the
// flux CLI, on purpose, where the flux CLI exits 0 after reporting a
// failure: `get KIND NAME` for a missing object, `suspend`/`resume` when a
// named object is missing or a wait fails.
//
// # Other deliberate differences from the flux CLI
//
//   - `reconcile` waits for status.lastHandledReconcileAt to equal the token
//     it wrote (or a later one), not merely to change.
//   - `resume` removes spec.suspend and the suspend.toolkit.fluxcd.io/reason
//     annotation that `suspend --reason` set, rather than writing false.
//   - `tree` prints to stdout (the flux CLI prints to stderr).
//   - `events --for Kind/name` of a deleted object shows its events instead
//     of failing.
//   - `create` applies with server-side apply and never scans an SSH host
//     for its key (known_hosts comes from --known-hosts-file); see
//     createcmd.
//   - `trace` prints to stdout and exits 1 when an object cannot be traced;
//     `logs` also reads a log file (--log-file, or the one `weir dev`
//     writes beside its kubeconfig).
package cli
