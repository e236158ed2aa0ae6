// Package release runs the Helm v4 SDK for one HelmRelease as a small state
// machine: observe the release in Helm's storage (the standard
// sh.helm.release.v1.<name>.v<N> Secrets), decide the next action with a
// pure function, and act — install, upgrade, test, rollback, uninstall or
// unlock a release a dead controller left pending — one file per action.
// The HelmRelease spec's options are mapped onto the SDK's action structs
// here, so the controller and the CLI share one mapping.
//
// It also composes a release's values from spec.valuesFrom and spec.values
// in Flux's order.
//
// The package knows nothing of controller-runtime reconcilers: the helm
// controller drives it and turns its outcomes into status and events.
package release
