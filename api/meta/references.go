package meta

// LocalObjectReference points at an object in the referrer's namespace.
type LocalObjectReference struct {
	// Name of the referent.
	// +required
	Name string `json:"name"`
}

// NamespacedObjectReference points at an object by name, in the given
// namespace or, when empty, in the referrer's.
type NamespacedObjectReference struct {
	// Name of the referent.
	// +required
	Name string `json:"name"`

	// Namespace of the referent; the referrer's when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// NamespacedObjectKindReference points at an object of a given kind.
type NamespacedObjectKindReference struct {
	// APIVersion of the referent.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the referent.
	// +required
	Kind string `json:"kind"`

	// Name of the referent.
	// +required
	Name string `json:"name"`

	// Namespace of the referent; the referrer's when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// SecretKeyReference points at one key of a Secret in the referrer's
// namespace.
type SecretKeyReference struct {
	// Name of the Secret.
	// +required
	Name string `json:"name"`

	// Key in the Secret; each kind documents its default.
	// +optional
	Key string `json:"key,omitempty"`
}

// KubeConfigReference says how to reach a remote cluster: a kubeconfig in a
// Secret, or a ConfigMap describing a cloud provider's workload identity.
// +kubebuilder:validation:XValidation:rule="has(self.configMapRef) || has(self.secretRef)",message="exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified"
// +kubebuilder:validation:XValidation:rule="!has(self.configMapRef) || !has(self.secretRef)",message="exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified"
type KubeConfigReference struct {
	// ConfigMapRef names a ConfigMap with the keys provider, cluster,
	// address, ca.crt, audiences and serviceAccountName.
	// +optional
	ConfigMapRef *LocalObjectReference `json:"configMapRef,omitempty"`

	// SecretRef names a Secret holding a kubeconfig, under key "value" or
	// "value.yaml" unless Key says otherwise.
	// +optional
	SecretRef *SecretKeyReference `json:"secretRef,omitempty"`
}

// DependencyReference names an object that must be ready before the
// referrer is reconciled.
type DependencyReference struct {
	// Name of the dependency.
	// +required
	Name string `json:"name"`

	// Namespace of the dependency; the referrer's when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// ReadyExpr is a CEL expression over `dep` (the dependency) and `self`
	// (the dependent) that decides readiness instead of the built-in check.
	// +optional
	ReadyExpr string `json:"readyExpr,omitempty"`
}

// AccessFrom restricts which namespaces may refer to an object.
type AccessFrom struct {
	// NamespaceSelectors lists the namespaces allowed; any match grants access.
	// +required
	NamespaceSelectors []NamespaceSelector `json:"namespaceSelectors"`
}

// NamespaceSelector selects namespaces by label.
type NamespaceSelector struct {
	// MatchLabels is a map of {key,value} pairs a namespace's labels must hold.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}
