package ssa

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

// ObjMetadata identifies an object independently of the API version it is
// read or written with: an inventory keeps objects by it, and an object
// keeps its identity when its kind moves to a new version.
type ObjMetadata struct {
	Namespace string
	Name      string
	GroupKind schema.GroupKind
}

// ObjMetadataOf returns the identity of obj.
func ObjMetadataOf(obj *unstructured.Unstructured) ObjMetadata {
	return ObjMetadata{
		Namespace: obj.GetNamespace(),
		Name:      obj.GetName(),
		GroupKind: obj.GroupVersionKind().GroupKind(),
	}
}

// String returns "<kind>/<namespace>/<name>", or "<kind>/<name>" for a
// cluster-scoped object: the subject Flux writes in its events and errors,
// for example "Deployment/default/podinfo" or "Namespace/apps".
func (m ObjMetadata) String() string {
	if m.Namespace == "" {
		return m.GroupKind.Kind + "/" + m.Name
	}
	return m.GroupKind.Kind + "/" + m.Namespace + "/" + m.Name
}

// Owner names the Kustomization an object is applied for. Apply writes it
// into the object's labels and Prune refuses to delete objects whose labels
// name another owner.
type Owner struct {
	Name      string
	Namespace string
}

// Labels returns the owner labels: kustomize.toolkit.fluxcd.io/name and
// kustomize.toolkit.fluxcd.io/namespace.
func (o Owner) Labels() map[string]string {
	return map[string]string{
		kustomizev1.NameLabel:      o.Name,
		kustomizev1.NamespaceLabel: o.Namespace,
	}
}

// owns reports whether obj's labels name o.
func (o Owner) owns(obj *unstructured.Unstructured) bool {
	labels := obj.GetLabels()
	return labels[kustomizev1.NameLabel] == o.Name && labels[kustomizev1.NamespaceLabel] == o.Namespace
}

// hasMeta reports whether obj carries key with value as a label or an
// annotation, comparing values without regard to case, as Flux does for
// its per-object annotations ("Disabled" and "disabled" both turn pruning
// off). A nil obj has nothing.
func hasMeta(obj *unstructured.Unstructured, key, value string) bool {
	if obj == nil {
		return false
	}
	if v, ok := obj.GetAnnotations()[key]; ok && strings.EqualFold(v, value) {
		return true
	}
	v, ok := obj.GetLabels()[key]
	return ok && strings.EqualFold(v, value)
}
