package meta

// Selector picks resources of a kustomize build by GVK, name, namespace and
// label or annotation selectors. Name and namespace are regular expressions.
type Selector struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// AnnotationSelector is a Kubernetes label selector over annotations.
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	// LabelSelector is a Kubernetes label selector.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// Patch is a strategic-merge or JSON 6902 patch applied to the resources
// Target selects (all of them when Target is nil).
type Patch struct {
	// Patch is the patch document, YAML or JSON.
	// +required
	Patch string `json:"patch"`

	// Target selects the resources to patch.
	// +optional
	Target *Selector `json:"target,omitempty"`
}

// Image overrides the name, tag or digest of container images.
type Image struct {
	// Name is the image name to match.
	// +required
	Name string `json:"name"`

	// NewName replaces the image name.
	// +optional
	NewName string `json:"newName,omitempty"`

	// NewTag replaces the tag.
	// +optional
	NewTag string `json:"newTag,omitempty"`

	// Digest replaces the tag with a digest; it wins over NewTag.
	// +optional
	Digest string `json:"digest,omitempty"`
}

// IgnoreRule names fields, by JSON pointer, that the controller leaves alone
// when applying or detecting drift on the objects Target selects.
type IgnoreRule struct {
	// Paths are JSON pointers (RFC 6901) to the fields to ignore.
	// +required
	Paths []string `json:"paths"`

	// Target selects the objects the rule applies to; all when nil.
	// +optional
	Target *Selector `json:"target,omitempty"`
}
