// Package reconcilecmd implements `weir reconcile`: ask a controller to
// reconcile an object now, through the reconcile.fluxcd.io/requestedAt
// annotation, wait until it has acted on that request, and report the
// outcome, as `flux reconcile` does. `reconcile kustomization --with-source`
// first does the same for the Kustomization's source.
package reconcilecmd
