package meta

// HealthCheckExpressions are CEL expressions that decide the health of
// custom resources kstatus cannot judge. They are evaluated in the order
// InProgress, Failed, Current; the first that holds decides.
type HealthCheckExpressions struct {
	// APIVersion of the resources; only the group is matched.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the resources; all kinds of the group when empty.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Current is true when the resource is healthy.
	// +required
	Current string `json:"current"`

	// InProgress is true while the resource is still converging.
	// +optional
	InProgress string `json:"inProgress,omitempty"`

	// Failed is true when the resource has failed.
	// +optional
	Failed string `json:"failed,omitempty"`
}
