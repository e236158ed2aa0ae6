package ssa

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// skip reports whether Apply must leave the object alone: it is annotated
// reconcile: disabled or ssa: Ignore, in the manifest or in the cluster, or
// it is annotated ssa: IfNotPresent in the manifest and exists already.
func skip(desired, existing *unstructured.Unstructured) bool {
	for _, obj := range []*unstructured.Unstructured{desired, existing} {
		if hasMeta(obj, kustomizev1.ReconcileAnnotation, kustomizev1.ReconcileDisabledValue) ||
			hasMeta(obj, kustomizev1.SSAAnnotation, kustomizev1.SSAIgnore) {
			return true
		}
	}
	return existing != nil && hasMeta(desired, kustomizev1.SSAAnnotation, kustomizev1.SSAIfNotPresent)
}

// forced reports whether an immutable-field failure may be resolved by
// deleting and recreating the object.
func forced(desired, existing *unstructured.Unstructured, opts ApplyOptions) bool {
	return opts.Force || ForceAnnotated(desired) || ForceAnnotated(existing)
}

// ForceAnnotated reports whether obj is annotated (or labelled)
// kustomize.toolkit.fluxcd.io/force: Enabled: an immutable-field change
// recreates it even when the Kustomization does not force. Offline
// analyses (`weir diff --base`) judge manifests by it as Apply does.
func ForceAnnotated(obj *unstructured.Unstructured) bool {
	return hasMeta(obj, kustomizev1.ForceAnnotation, kustomizev1.EnabledValue)
}

// KeptByPrune reports whether obj's metadata keeps Prune from deleting
// it: kustomize.toolkit.fluxcd.io/prune: Disabled or
// kustomize.toolkit.fluxcd.io/reconcile: disabled.
func KeptByPrune(obj *unstructured.Unstructured) bool {
	return hasMeta(obj, kustomizev1.PruneAnnotation, kustomizev1.DisabledValue) ||
		hasMeta(obj, kustomizev1.ReconcileAnnotation, kustomizev1.ReconcileDisabledValue)
}

// merged reports whether the object is annotated ssa: Merge, in which case
// Apply does not take over the fields of kubectl and the other override
// managers: what they set and the manifest does not stays.
func merged(desired, existing *unstructured.Unstructured) bool {
	return hasMeta(desired, kustomizev1.SSAAnnotation, kustomizev1.SSAMerge) ||
		hasMeta(existing, kustomizev1.SSAAnnotation, kustomizev1.SSAMerge)
}

// drifted reports whether the dry-run result of an apply differs from the
// object in the cluster, ignoring what every write changes
// (resourceVersion, managedFields). A dry-run runs defaulting, admission
// and conversion like a real write, so an apply that would change nothing
// yields the object as stored.
func drifted(existing, dryRun *unstructured.Unstructured) bool {
	return !equality.Semantic.DeepEqual(comparableFields(existing), comparableFields(dryRun))
}

func comparableFields(obj *unstructured.Unstructured) map[string]any {
	out := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		out[k] = v
	}
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			if k != "managedFields" && k != "resourceVersion" {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}
