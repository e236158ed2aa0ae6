// Package cli assembles the weir command line: the root command, the global
// kubectl-style flags, and one subpackage per verb (internal/cli/<verb>),
// each exposing NewCommand(streams, deps). No package-level flag variables:
// every command is built fresh, so tests run commands side by side.
package cli
