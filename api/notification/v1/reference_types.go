package v1

// CrossNamespaceObjectReference selects Flux objects by kind, and either by
// name or, with name "*", by labels; optionally in another namespace.
type CrossNamespaceObjectReference struct {
	// APIVersion of the objects.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the objects.
	// +kubebuilder:validation:Enum=Bucket;GitRepository;Kustomization;HelmRelease;HelmChart;HelmRepository;ImageRepository;ImagePolicy;ImageUpdateAutomation;OCIRepository;ArtifactGenerator;ExternalArtifact
	// +required
	Kind string `json:"kind"`

	// Name of the object, or "*" for every object of Kind (narrowed by
	// MatchLabels).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Namespace of the objects; the referrer's when empty. "*" means every
	// namespace and requires Name "*".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// MatchLabels narrows Name "*" to the objects carrying all these labels.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}
