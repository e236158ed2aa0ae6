package v1

import "github.com/weir-gitops/weir/api/meta"

// KustomizationKind is the kind name of Kustomization objects.
const KustomizationKind = "Kustomization"

// HealthyCondition reports the result of the last health assessment of the
// applied objects. It is the same condition type as meta.HealthyCondition,
// repeated here so readers of this package find it next to the reasons.
const HealthyCondition = meta.HealthyCondition

// Reasons a Kustomization's conditions carry. They are the generic reasons of
// api/meta; the aliases document which of them this kind uses.
const (
	// PruneFailedReason: deleting objects dropped from the build failed.
	PruneFailedReason = meta.PruneFailedReason
	// ArtifactFailedReason: the source artifact could not be fetched or
	// verified.
	ArtifactFailedReason = meta.ArtifactFailedReason
	// BuildFailedReason: kustomize build, substitution or decryption failed.
	BuildFailedReason = meta.BuildFailedReason
	// HealthCheckFailedReason: the applied objects did not become healthy
	// within the timeout.
	HealthCheckFailedReason = meta.HealthCheckFailedReason
	// HealthCheckCanceledReason: a new source revision cut a running health
	// check short.
	HealthCheckCanceledReason = meta.HealthCheckCanceledReason
	// DependencyNotReadyReason: an entry of spec.dependsOn is not ready yet.
	DependencyNotReadyReason = meta.DependencyNotReadyReason
	// ReconciliationSucceededReason: the revision was applied (and is
	// healthy, when health checks are configured).
	ReconciliationSucceededReason = meta.ReconciliationSucceededReason
	// ReconciliationFailedReason: applying the build failed.
	ReconciliationFailedReason = meta.ReconciliationFailedReason
	// ProgressingWithRetryReason: the last attempt failed and another one is
	// scheduled after spec.retryInterval.
	ProgressingWithRetryReason = meta.ProgressingWithRetryReason
)
