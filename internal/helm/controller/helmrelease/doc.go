// Package helmrelease reconciles HelmRelease objects as Flux's
// helm-controller does, on the Helm v4 SDK: it resolves spec.chart (a
// HelmChart it creates, <ns>-<name>) or spec.chartRef (a HelmChart, an
// OCIRepository holding a Helm chart, or an ExternalArtifact behind its
// gate) to an artifact, downloads it (digest verified) and loads
// the chart, composes the values, and then runs internal/helm/release's
// state machine — observe the release in Helm's storage, decide, act —
// until the release is in sync, stalled, or an action failed. Each action
// writes Flux's conditions (Released, TestSuccess, Remediated, summarised
// into Ready), status.history snapshots and events. Deleting a HelmRelease
// uninstalls its release (spec.uninstall) before the finalizer goes.
//
// A release a killed controller left pending-install, pending-upgrade or
// pending-rollback is unlocked on the next reconcile, with an event saying
// so; a release whose retries are exhausted is Stalled, naming the failed
// action and `weir reconcile hr --reset`.
//
// Not built yet: dependsOn, drift
// detection, post-renderers and commonMetadata, impersonation and
// spec.kubeConfig (see Reconciler.restConfig, the seam), healthCheckExprs.
package helmrelease
