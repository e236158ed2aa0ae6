// Package clitest runs weir's CLI in tests: against the control plane of
// internal/devenv/testenv, with a fixed clock and fast polling, capturing what it
// prints, and compares the output with golden files under testdata/ (the
// -update flag rewrites them).
package clitest
