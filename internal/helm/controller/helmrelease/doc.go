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
// dependsOn is checked before the chart is loaded (dependencies.go, with
// internal/apply/dependency's rules and a watch that reconciles a dependent
// the moment its dependency is Ready); a release in sync is compared with
// the cluster per spec.driftDetection and, in enabled mode, corrected
// (drift.go); spec.postRenderers and spec.commonMetadata run in
// internal/helm/release's post-renderer chain; every action runs as
// spec.serviceAccountName or in the cluster of spec.kubeConfig.secretRef
// (restConfig, through internal/apply/restconfig); spec.healthCheckExprs
// judge what an install or upgrade wrote (healthexprs.go).
//
// Not built yet: spec.kubeConfig.configMapRef (cloud workload identity).
package helmrelease
