package meta

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types. Ready is always present on a reconciled object; Reconciling
// and Stalled are "abnormal-true" conditions, present only while True, which
// is what kstatus reads.
const (
	// ReadyCondition says whether the object's last reconciliation succeeded.
	ReadyCondition string = "Ready"
	// ReconcilingCondition is True while the controller works towards a new state.
	ReconcilingCondition string = "Reconciling"
	// StalledCondition is True when the controller cannot make progress
	// without a change to the object (for example an invalid spec).
	StalledCondition string = "Stalled"
	// HealthyCondition reports the outcome of health checks (Kustomization).
	HealthyCondition string = "Healthy"
)

// Generic condition reasons used by more than one controller.
const (
	SucceededReason                     string = "Succeeded"
	FailedReason                        string = "Failed"
	ProgressingReason                   string = "Progressing"
	ProgressingWithRetryReason          string = "ProgressingWithRetry"
	SuspendedReason                     string = "Suspended"
	DependencyNotReadyReason            string = "DependencyNotReady"
	InvalidPathReason                   string = "InvalidPath"
	InvalidURLReason                    string = "InvalidURL"
	InsecureConnectionsDisallowedReason string = "InsecureConnectionsDisallowed"
	UnsupportedConnectionTypeReason     string = "UnsupportedConnectionType"
	PruneFailedReason                   string = "PruneFailed"
	ArtifactFailedReason                string = "ArtifactFailed"
	BuildFailedReason                   string = "BuildFailed"
	HealthCheckFailedReason             string = "HealthCheckFailed"
	HealthCheckCanceledReason           string = "HealthCheckCanceled"
	ReconciliationSucceededReason       string = "ReconciliationSucceeded"
	ReconciliationFailedReason          string = "ReconciliationFailed"
	InvalidCELExpressionReason          string = "InvalidCELExpression"
	FeatureGateDisabledReason           string = "FeatureGateDisabled"
	AccessDeniedReason                  string = "AccessDenied"
)

// ObjectWithConditions is implemented by every reconciled kind, so generic
// code (status helpers, the CLI, tests) can read and write conditions.
//
// +kubebuilder:object:generate=false
type ObjectWithConditions interface {
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}
