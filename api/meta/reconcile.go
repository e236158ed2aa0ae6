package meta

import "time"

// ReconcileRequestStatus records the last ReconcileRequestAnnotation value a
// controller acted on. It is embedded inline in every reconciled kind's
// status.
type ReconcileRequestStatus struct {
	// LastHandledReconcileAt holds the value of the most recent
	// reconcile.fluxcd.io/requestedAt annotation that was handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// GetLastHandledReconcileRequest returns the last handled request token.
func (in ReconcileRequestStatus) GetLastHandledReconcileRequest() string {
	return in.LastHandledReconcileAt
}

// SetLastHandledReconcileRequest records token as handled.
func (in *ReconcileRequestStatus) SetLastHandledReconcileRequest(token string) {
	in.LastHandledReconcileAt = token
}

// ReconcileAnnotationValue returns the value of ReconcileRequestAnnotation
// in annotations, and whether it is set.
func ReconcileAnnotationValue(annotations map[string]string) (string, bool) {
	v, ok := annotations[ReconcileRequestAnnotation]
	return v, ok
}

// NewReconcileRequestToken is the token the CLI writes into
// ReconcileRequestAnnotation.
func NewReconcileRequestToken(now time.Time) string {
	return now.Format(time.RFC3339Nano)
}

// ForceRequestStatus records the last ForceRequestAnnotation value handled.
type ForceRequestStatus struct {
	// LastHandledForceAt holds the value of the most recent force request
	// that was handled.
	// +optional
	LastHandledForceAt string `json:"lastHandledForceAt,omitempty"`
}

// ResetRequestStatus records the last ResetRequestAnnotation value handled.
type ResetRequestStatus struct {
	// LastHandledResetAt holds the value of the most recent reset request
	// that was handled.
	// +optional
	LastHandledResetAt string `json:"lastHandledResetAt,omitempty"`
}
