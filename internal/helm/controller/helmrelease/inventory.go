package helmrelease

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/apply/inventory"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// inventoryOf is status.inventory for the objects of a release's
// manifest: one entry per object, in the manifest's order (Helm's install
// order), with the Kustomization's id format
// (<namespace>_<name>_<group>_<kind>) and the object's API version.
func inventoryOf(objs []*unstructured.Unstructured) *helmv2.ResourceInventory {
	inv := &helmv2.ResourceInventory{Entries: []helmv2.ResourceRef{}}
	seen := make(map[string]bool, len(objs))
	for _, o := range objs {
		id := inventory.ID(ssa.ObjMetadataOf(o))
		if seen[id] {
			continue
		}
		seen[id] = true
		inv.Entries = append(inv.Entries, helmv2.ResourceRef{ID: id, Version: o.GroupVersionKind().Version})
	}
	return inv
}
