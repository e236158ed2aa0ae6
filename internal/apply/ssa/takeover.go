package ssa

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Metadata Apply removes from objects in the cluster before applying them:
// kubectl's client-side apply annotation, and the checksum annotation and
// garbage-collection label of Flux v1 and early kustomize-controllers (the
// same list as kustomize-controller).
var (
	cleanupAnnotations = []string{
		corev1.LastAppliedConfigAnnotation,
		"kustomize.toolkit.fluxcd.io/checksum",
		"fluxcd.io/sync-checksum",
	}
	cleanupLabels = []string{"fluxcd.io/sync-gc-mark"}
)

// managerMatch selects managedFields entries by manager-name prefix and
// operation, as Flux's cleanup does.
type managerMatch struct {
	prefix string
	op     metav1.ManagedFieldsOperationType
}

// takeoverFrom lists the managers whose fields Apply takes over: kubectl in
// both operations (server-side apply with --force-conflicts, and
// client-side apply, edit, patch... whose manager names all start with
// "kubectl"), before-first-apply (the server's name for what a client-side
// apply owned when the object was first server-side applied), the
// controller's own non-apply writes, and the override managers in both
// operations. flux-client-side-apply, the documented escape hatch for hand
// edits, matches none of them.
func takeoverFrom(fieldManager string, overrides []string) []managerMatch {
	from := []managerMatch{
		{"kubectl", metav1.ManagedFieldsOperationApply},
		{"kubectl", metav1.ManagedFieldsOperationUpdate},
		{"before-first-apply", metav1.ManagedFieldsOperationUpdate},
		{fieldManager, metav1.ManagedFieldsOperationUpdate},
	}
	for _, name := range overrides {
		from = append(from,
			managerMatch{name, metav1.ManagedFieldsOperationApply},
			managerMatch{name, metav1.ManagedFieldsOperationUpdate})
	}
	return from
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// cleanupPatch returns the JSON patch that prepares an in-cluster object
// for Apply, or nil if it needs none. The fields of the managers of
// takeoverFrom are merged into fieldManager's apply entry (or, if it has
// none yet, the first of them is renamed to it), so the following apply
// owns them: it sets them to the manifest's values and removes the ones the
// manifest leaves out, as Flux does. The annotations and labels of
// cleanupAnnotations and cleanupLabels are removed. The patch first tests
// the resourceVersion it was computed from, so it fails rather than
// overwrite managedFields that changed in between.
func cleanupPatch(existing *unstructured.Unstructured, fieldManager string, overrides []string) ([]byte, error) {
	ops := []patchOp{{Op: "test", Path: "/metadata/resourceVersion", Value: existing.GetResourceVersion()}}
	entries, changed, err := takeOver(existing.GetManagedFields(), fieldManager, takeoverFrom(fieldManager, overrides))
	if err != nil {
		return nil, err
	}
	if changed {
		ops = append(ops, patchOp{Op: "replace", Path: "/metadata/managedFields", Value: entries})
	}
	for _, key := range cleanupAnnotations {
		if _, ok := existing.GetAnnotations()[key]; ok {
			ops = append(ops, patchOp{Op: "remove", Path: "/metadata/annotations/" + pointerEscaper.Replace(key)})
		}
	}
	for _, key := range cleanupLabels {
		if _, ok := existing.GetLabels()[key]; ok {
			ops = append(ops, patchOp{Op: "remove", Path: "/metadata/labels/" + pointerEscaper.Replace(key)})
		}
	}
	if len(ops) == 1 {
		return nil, nil
	}
	return json.Marshal(ops)
}

// takeOver returns entries with the matching managers' field sets moved to
// fieldManager's apply entry, and whether anything moved. Entries for
// subresources (status, scale) are left alone.
func takeOver(entries []metav1.ManagedFieldsEntry, fieldManager string, from []managerMatch) ([]metav1.ManagedFieldsEntry, bool, error) {
	isOwn := func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == fieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
	}
	matches := func(e metav1.ManagedFieldsEntry) bool {
		return e.Subresource == "" && !isOwn(e) && matchesAny(e, from)
	}
	var own *metav1.ManagedFieldsEntry
	if i := slices.IndexFunc(entries, isOwn); i >= 0 {
		own = entries[i].DeepCopy()
	}
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	changed := false
	for _, e := range entries {
		switch {
		case isOwn(e):
		case !matches(e):
			out = append(out, e)
		case own == nil:
			changed = true
			own = e.DeepCopy()
			own.Manager, own.Operation = fieldManager, metav1.ManagedFieldsOperationApply
		default:
			changed = true
			union, err := unionFields(own.FieldsV1, e.FieldsV1)
			if err != nil {
				return nil, false, fmt.Errorf("merging the fields of manager %q: %w", e.Manager, err)
			}
			own.FieldsV1 = union
		}
	}
	if !changed {
		return entries, false, nil
	}
	return append(out, *own), true, nil
}

func unionFields(a, b *metav1.FieldsV1) (*metav1.FieldsV1, error) {
	if a == nil {
		return b, nil
	}
	if b == nil {
		return a, nil
	}
	var sa, sb fieldpath.Set
	if err := sa.FromJSON(a.GetRawReader()); err != nil {
		return nil, err
	}
	if err := sb.FromJSON(b.GetRawReader()); err != nil {
		return nil, err
	}
	raw, err := sa.Union(&sb).ToJSON()
	if err != nil {
		return nil, err
	}
	return metav1.NewFieldsV1(string(raw)), nil
}
