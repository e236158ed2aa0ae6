// Package reconcilecmd implements `weir reconcile`: ask a controller to
// reconcile an object now, through the reconcile.fluxcd.io/requestedAt
// annotation, wait until it has acted on that request, and report the
// outcome, as `flux reconcile` does. `reconcile kustomization --with-source`
// first does the same for the Kustomization's source, and stops at the
// source's failure.
//
// The wait ends as soon as the controller has answered the request
// (Outcome): success when Ready is True, failure, at once, when Ready is
// False or Stalled is True, printed as "<Kind> reconciliation failed:
// <reason>: '<message>'". It goes on only while the run is visibly in
// progress (Ready Unknown, Reconciling True). The current generation is
// read from the Ready condition, not status.observedGeneration, which the
// Kustomization and HelmRelease controllers (Flux's and weir's) leave
// behind on a failure they will retry: waiting for it is how `flux
// reconcile` and, before issue 33, this command waited out --timeout on a
// failure the controller had reported within a second.
//
// A Ready=False whose reason is a wait for something else — a dependency
// not ready (DependencyNotReady), a source without an artifact yet
// (ArtifactFailed, "Source artifact not found, retrying in …") — is a
// failure too, deliberately: it is the answer to this request (nothing
// was applied, and why), the controller's retry comes on its own schedule
// (spec.retryInterval, --requeue-dependency) and is not an answer to the
// request, and waiting for it would hide the reason until a timeout. It is
// what `flux reconcile` reports once it sees the handled request. To wait
// for the dependency, reconcile it first (or use --with-source for the
// source). docs/reconcile.md says the same for users.
package reconcilecmd
