package v1

// ResourceInventory is the set of objects a Kustomization applied.
type ResourceInventory struct {
	// Entries, one per applied object.
	// +required
	Entries []ResourceRef `json:"entries"`
}

// ResourceRef identifies one applied object.
type ResourceRef struct {
	// ID is "<namespace>_<name>_<group>_<kind>"; namespace and group are
	// empty for cluster-scoped objects and the core group, for example
	// "default_podinfo_apps_Deployment" or "default_podinfo__Service".
	// +required
	ID string `json:"id"`

	// Version is the API version the object was applied with, e.g. "v1".
	// +required
	Version string `json:"v"`
}
