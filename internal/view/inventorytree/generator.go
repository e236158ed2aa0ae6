package inventorytree

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/object"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
)

var (
	artifactGeneratorGVK = sourceextensionsv1beta1.GroupVersion.WithKind(sourceextensionsv1beta1.ArtifactGeneratorKind)
	externalArtifactGK   = schema.GroupKind{Group: sourcev1.GroupVersion.Group, Kind: sourcev1.ExternalArtifactKind}
)

// generated lists the ExternalArtifacts of an ArtifactGenerator's
// status.inventory, in its order; with Options.Consumers each carries the
// Kustomizations and HelmReleases that read it.
func (w *walker) generated(ctx context.Context, owner *unstructured.Unstructured) ([]*Node, error) {
	refs, _, _ := unstructured.NestedSlice(owner.Object, "status", "inventory")
	out := make([]*Node, 0, len(refs))
	for _, r := range refs {
		m, _ := r.(map[string]any)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = owner.GetNamespace()
		}
		out = append(out, &Node{
			Resource: object.ObjMetadata{Namespace: ns, Name: name, GroupKind: externalArtifactGK},
			Version:  sourcev1.GroupVersion.Version,
		})
	}
	if !w.opts.Consumers || len(out) == 0 {
		return out, nil
	}
	consumers, err := w.consumers(ctx, owner.GetNamespace())
	if err != nil {
		return nil, err
	}
	for _, n := range out {
		for _, c := range consumers {
			if c.reads == n.Resource {
				n.Resources = append(n.Resources, &Node{Resource: c.meta, Version: c.version})
			}
		}
	}
	return out, nil
}

// consumer is a Kustomization or HelmRelease and the ExternalArtifact it
// reads.
type consumer struct {
	meta, reads object.ObjMetadata
	version     string
}

// consumers lists the Kustomizations (spec.sourceRef) and HelmReleases
// (spec.chartRef) that read an ExternalArtifact, in every namespace, or in
// ns alone when the caller may not list across namespaces.
func (w *walker) consumers(ctx context.Context, ns string) ([]consumer, error) {
	var out []consumer
	for _, k := range []struct {
		gvk  schema.GroupVersionKind
		path []string
	}{{kustomizationGVK, []string{"spec", "sourceRef"}}, {helmReleaseGVK, []string{"spec", "chartRef"}}} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		err := w.c.List(ctx, list)
		if apierrors.IsForbidden(err) {
			err = w.c.List(ctx, list, client.InNamespace(ns))
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s objects: %w", k.gvk.Kind, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			ref, ok, _ := unstructured.NestedStringMap(u.Object, k.path...)
			if !ok || ref["kind"] != sourcev1.ExternalArtifactKind {
				continue
			}
			refNS := ref["namespace"]
			if refNS == "" {
				refNS = u.GetNamespace()
			}
			out = append(out, consumer{
				meta:    object.ObjMetadata{Namespace: u.GetNamespace(), Name: u.GetName(), GroupKind: k.gvk.GroupKind()},
				reads:   object.ObjMetadata{Namespace: refNS, Name: ref["name"], GroupKind: externalArtifactGK},
				version: k.gvk.Version,
			})
		}
	}
	return out, nil
}
