// Package debugcmd implements `weir debug kustomization|helmrelease NAME`:
// what a failing reconciliation was working from, printed for a person or a
// script. --show-vars and --show-values print what the controller would
// compute, through the very functions it runs (render.Variables,
// release.Values), so the answer cannot drift from the controller's;
// --show-status and --show-history print the object's status as YAML, as
// the flux CLI does.
package debugcmd
