package v2

// ResourceInventory lists the objects a release applied.
type ResourceInventory struct {
	// Entries are the objects, one each.
	// +required
	Entries []ResourceRef `json:"entries"`
}

// ResourceRef identifies one object in an inventory.
type ResourceRef struct {
	// ID is <namespace>_<name>_<group>_<kind>, with an empty namespace for
	// cluster-scoped objects and an empty group for the core group.
	// +required
	ID string `json:"id"`

	// Version is the API version of the object's kind.
	// +required
	Version string `json:"v"`
}
