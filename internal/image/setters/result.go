package setters

import (
	"cmp"
	"maps"
	"slices"
)

// Result is what an update changed, file → object → changes: Flux's
// .Changed in commit message templates.
type Result struct {
	// FileChanges maps a file path, relative to the update path, to the
	// changes made to the objects in it.
	FileChanges map[string]ObjectChanges
}

// ObjectChanges maps an object to the changes made to it.
type ObjectChanges map[ObjectIdentifier][]Change

// ObjectIdentifier names an object of a file; a document that is not a
// Kubernetes object (a values file) has empty fields.
type ObjectIdentifier struct {
	Name, Namespace, APIVersion, Kind string
}

// Change is one field written by a setter.
type Change struct {
	OldValue string
	NewValue string
	// Setter is the marker's value, <namespace>:<policy>[:part].
	Setter string
}

// Empty reports whether nothing changed.
func (r Result) Empty() bool { return len(r.FileChanges) == 0 }

// Objects returns the changes per object, whatever file they are in.
func (r Result) Objects() ObjectChanges {
	out := ObjectChanges{}
	for _, file := range slices.Sorted(maps.Keys(r.FileChanges)) {
		for id, changes := range r.FileChanges[file] {
			out[id] = append(out[id], changes...)
		}
	}
	return out
}

// Changes returns every change, ordered by file, then object (kind,
// namespace, name, apiVersion), then position in the document.
func (r Result) Changes() []Change {
	var out []Change
	for _, file := range slices.Sorted(maps.Keys(r.FileChanges)) {
		objects := r.FileChanges[file]
		ids := slices.SortedFunc(maps.Keys(objects), compareIDs)
		for _, id := range ids {
			out = append(out, objects[id]...)
		}
	}
	return out
}

func compareIDs(a, b ObjectIdentifier) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name), cmp.Compare(a.APIVersion, b.APIVersion))
}
