package v2

// HelmReleaseKind is the kind name of HelmRelease objects.
const HelmReleaseKind = "HelmRelease"

// Condition types a HelmRelease carries besides meta.ReadyCondition,
// meta.ReconcilingCondition and meta.StalledCondition.
const (
	// ReleasedCondition reports the outcome of the last install or upgrade
	// aimed at the current desired state.
	ReleasedCondition string = "Released"

	// TestSuccessCondition reports the outcome of the last Helm test run
	// against the current desired state.
	TestSuccessCondition string = "TestSuccess"

	// RemediatedCondition reports the outcome of the last rollback or
	// uninstall performed because a release attempt failed.
	RemediatedCondition string = "Remediated"

	// DriftedCondition is True when the cluster objects of the release no
	// longer match the manifest held in Helm's storage.
	DriftedCondition string = "Drifted"
)

// Condition reasons specific to HelmRelease.
const (
	// InstallSucceededReason: a Helm install completed.
	InstallSucceededReason string = "InstallSucceeded"
	// InstallFailedReason: a Helm install did not complete.
	InstallFailedReason string = "InstallFailed"

	// UpgradeSucceededReason: a Helm upgrade completed.
	UpgradeSucceededReason string = "UpgradeSucceeded"
	// UpgradeFailedReason: a Helm upgrade did not complete.
	UpgradeFailedReason string = "UpgradeFailed"

	// TestSucceededReason: every selected Helm test hook passed.
	TestSucceededReason string = "TestSucceeded"
	// TestFailedReason: at least one Helm test hook failed.
	TestFailedReason string = "TestFailed"

	// RollbackSucceededReason: a remediating Helm rollback completed.
	RollbackSucceededReason string = "RollbackSucceeded"
	// RollbackFailedReason: a remediating Helm rollback did not complete.
	RollbackFailedReason string = "RollbackFailed"

	// UninstallSucceededReason: a Helm uninstall completed.
	UninstallSucceededReason string = "UninstallSucceeded"
	// UninstallFailedReason: a Helm uninstall did not complete.
	UninstallFailedReason string = "UninstallFailed"

	// DriftDetectedReason: cluster objects differ from the stored release.
	DriftDetectedReason string = "DriftDetected"
	// NoDriftDetectedReason: cluster objects match the stored release.
	NoDriftDetectedReason string = "NoDriftDetected"

	// ArtifactFailedReason: the chart artifact could not be fetched or
	// loaded.
	ArtifactFailedReason string = "ArtifactFailed"

	// InitFailedReason: the Helm client or its storage could not be set up
	// (for example the kubeconfig or impersonation failed).
	InitFailedReason string = "InitFailed"

	// GetLastReleaseFailedReason: the current release could not be read
	// from Helm's storage.
	GetLastReleaseFailedReason string = "GetLastReleaseFailed"

	// DependencyNotReadyReason: an object in spec.dependsOn is not ready.
	DependencyNotReadyReason string = "DependencyNotReady"

	// ReconciliationSucceededReason: the reconciliation finished without error.
	ReconciliationSucceededReason string = "ReconciliationSucceeded"

	// ReconciliationFailedReason: the reconciliation ended in an error.
	ReconciliationFailedReason string = "ReconciliationFailed"
)

// Annotations and labels with a meaning to the helm controller.
const (
	// DriftDetectionMetadataKey, set to DisabledValue as a label or
	// annotation on an object rendered by a chart, leaves that object out
	// of drift detection and correction.
	DriftDetectionMetadataKey = "helm.toolkit.fluxcd.io/driftDetection"

	// EnabledValue and DisabledValue are the values of switch-like
	// annotations and labels.
	EnabledValue  = "enabled"
	DisabledValue = "disabled"

	// NameLabel and NamespaceLabel are set on every object of a release to
	// the name and namespace of the HelmRelease that owns it; `flux trace`
	// follows them back.
	NameLabel      = "helm.toolkit.fluxcd.io/name"
	NamespaceLabel = "helm.toolkit.fluxcd.io/namespace"

	// RevisionEventAnnotation, AppVersionEventAnnotation and
	// OCIDigestEventAnnotation are the event metadata keys carrying the
	// chart version, the chart's appVersion and the OCI digest of the
	// chart artifact.
	RevisionEventAnnotation   = "helm.toolkit.fluxcd.io/revision"
	AppVersionEventAnnotation = "helm.toolkit.fluxcd.io/app-version"
	OCIDigestEventAnnotation  = "helm.toolkit.fluxcd.io/oci-digest"
)
