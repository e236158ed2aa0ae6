package inventory

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

const (
	separator = "_"
	// colon is how an id writes ":" in the name of an RBAC object.
	colon = "__"
)

const rbacGroup = "rbac.authorization.k8s.io"

// escapesColons reports whether the ids of kind gk write ":" as "__": the
// RBAC kinds, the only built-in ones whose names may hold a colon.
func escapesColons(gk schema.GroupKind) bool {
	if gk.Group != rbacGroup {
		return false
	}
	switch gk.Kind {
	case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
		return true
	}
	return false
}

// ID returns the inventory id of obj, e.g. "default_podinfo_apps_Deployment".
func ID(obj ssa.ObjMetadata) string {
	name := obj.Name
	if escapesColons(obj.GroupKind) {
		name = strings.ReplaceAll(name, ":", colon)
	}
	return obj.Namespace + separator + name + separator + obj.GroupKind.Group + separator + obj.GroupKind.Kind
}

// Parse reads an inventory id back into the object it names.
func Parse(id string) (ssa.ObjMetadata, error) {
	namespace, rest, ok := strings.Cut(id, separator)
	if !ok {
		return ssa.ObjMetadata{}, fmt.Errorf("inventory id %q: want <namespace>_<name>_<group>_<kind>", id)
	}
	i := strings.LastIndex(rest, separator)
	if i < 0 {
		return ssa.ObjMetadata{}, fmt.Errorf("inventory id %q: want <namespace>_<name>_<group>_<kind>", id)
	}
	rest, kind := rest[:i], rest[i+1:]
	i = strings.LastIndex(rest, separator)
	if i < 0 {
		return ssa.ObjMetadata{}, fmt.Errorf("inventory id %q: want <namespace>_<name>_<group>_<kind>", id)
	}
	name, group := rest[:i], rest[i+1:]
	if name == "" || kind == "" {
		return ssa.ObjMetadata{}, fmt.Errorf("inventory id %q has no name or no kind", id)
	}
	gk := schema.GroupKind{Group: group, Kind: kind}
	if escapesColons(gk) {
		name = strings.ReplaceAll(name, colon, ":")
	}
	return ssa.ObjMetadata{Namespace: namespace, Name: name, GroupKind: gk}, nil
}

// New returns the inventory of what Apply reported in cs, in cs's order
// (the apply order), leaving out the objects it skipped, as Flux does.
func New(cs *ssa.ChangeSet) kustomizev1.ResourceInventory {
	inv := kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{}}
	if cs == nil {
		return inv
	}
	for _, e := range cs.Entries {
		if e.Action == ssa.Skipped {
			continue
		}
		inv.Entries = append(inv.Entries, kustomizev1.ResourceRef{ID: ID(e.ObjMetadata), Version: e.Version})
	}
	return inv
}

// Merge returns inv with the objects of entries it does not name yet added
// at its end, and whether it added any. Objects are compared without their
// API version, as in Diff. The Kustomization controller records so what an
// apply stage is about to write, before it writes it.
func Merge(inv kustomizev1.ResourceInventory, entries []ssa.ChangeSetEntry) (kustomizev1.ResourceInventory, bool) {
	seen := make(map[string]bool, len(inv.Entries))
	for _, e := range inv.Entries {
		seen[e.ID] = true
	}
	out := kustomizev1.ResourceInventory{Entries: append([]kustomizev1.ResourceRef{}, inv.Entries...)}
	for _, e := range entries {
		id := ID(e.ObjMetadata)
		if seen[id] {
			continue
		}
		seen[id] = true
		out.Entries = append(out.Entries, kustomizev1.ResourceRef{ID: id, Version: e.Version})
	}
	return out, len(out.Entries) > len(inv.Entries)
}

// List returns the objects an inventory names, in its order.
func List(inv kustomizev1.ResourceInventory) ([]ssa.ObjMetadata, error) {
	out := make([]ssa.ObjMetadata, 0, len(inv.Entries))
	for _, e := range inv.Entries {
		obj, err := Parse(e.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// Diff returns the objects of old that are neither in current nor in keep,
// sorted in apply order: what a reconcile prunes. Objects are compared
// without their API version, so an object applied in a new version is the
// same object. keep takes the objects the last Apply skipped
// (ChangeSet.Skipped): New leaves them out of the inventory, but an object
// a Kustomization stopped managing because of ssa: Ignore or reconcile:
// disabled must not be deleted for it.
func Diff(old, current kustomizev1.ResourceInventory, keep ...ssa.ObjMetadata) ([]ssa.ObjMetadata, error) {
	oldObjs, err := List(old)
	if err != nil {
		return nil, err
	}
	curObjs, err := List(current)
	if err != nil {
		return nil, err
	}
	present := make(map[ssa.ObjMetadata]bool, len(curObjs)+len(keep))
	for _, o := range append(curObjs, keep...) {
		present[o] = true
	}
	var stale []ssa.ObjMetadata
	for _, o := range oldObjs {
		if !present[o] {
			present[o] = true // report duplicates once
			stale = append(stale, o)
		}
	}
	ssa.SortInApplyOrder(stale)
	return stale, nil
}
