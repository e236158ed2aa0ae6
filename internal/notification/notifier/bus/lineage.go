package bus

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// maxKustomizationDepth bounds the walk up a chain of Kustomizations
// applying each other, against a cycle of labels.
const maxKustomizationDepth = 16

// node is an object's place in a trace: its span ID is derived from both.
type node struct{ uid, revision string }

// lineage places the event's object in Flux's graph, as Flux's otel
// notifier does, reading the objects through r: the revision the trace is
// keyed on (the root Kustomization's when a Kustomization applied the
// object, else the event's), and the span's parent, if any. A source's
// parent is the Kustomization that applied it; anything else's is the
// root Kustomization when it runs the same revision, else its source
// (sourceRef or chartRef). Objects that cannot be read are leaves; nil r
// finds no parents.
func lineage(ctx context.Context, r client.Reader, e events.Event) (string, *node) {
	rev := traceRevision(e)
	if r == nil {
		return rev, nil
	}
	kind := e.InvolvedObject.Kind
	chain := kustomizations(ctx, r, e.InvolvedObject)
	if len(chain) == 0 {
		if isSource(kind) {
			return rev, nil
		}
		return rev, sourceNode(ctx, r, e, rev)
	}
	root := chain[len(chain)-1]
	switch {
	case isSource(kind):
		return root.revision, &chain[0]
	case rev == root.revision:
		return root.revision, &node{uid: root.uid, revision: rev}
	default:
		return root.revision, sourceNode(ctx, r, e, rev)
	}
}

// kustomizations are the Kustomizations that applied the object, from the
// one that applied it to the root, read from the kustomize-controller's
// labels.
func kustomizations(ctx context.Context, r client.Reader, ref corev1.ObjectReference) []node {
	var chain []node
	for range maxKustomizationDepth {
		obj, err := get(ctx, r, ref.APIVersion, ref.Kind, ref.Namespace, ref.Name)
		if err != nil {
			return chain
		}
		name, ns := obj.GetLabels()[kustomizev1.NameLabel], obj.GetLabels()[kustomizev1.NamespaceLabel]
		if name == "" || ns == "" {
			return chain
		}
		ref = corev1.ObjectReference{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind,
			Namespace: ns, Name: name}
		ks, err := get(ctx, r, ref.APIVersion, ref.Kind, ns, name)
		if err != nil {
			return chain
		}
		chain = append(chain, node{uid: string(ks.GetUID()), revision: appliedRevision(ks)})
	}
	return chain
}

// appliedRevision is the revision a Kustomization last applied.
func appliedRevision(ks *unstructured.Unstructured) string {
	if rev, found, _ := unstructured.NestedString(ks.Object, "status", "lastAppliedRevision"); found {
		return rev
	}
	if rev, found, _ := unstructured.NestedString(ks.Object, "status", "artifact", "revision"); found {
		return rev
	}
	return "unknown"
}

// sourceNode is the source the object reconciles, from its chartRef or
// sourceRef (a HelmRepository's chart is the HelmChart of the same name,
// as Flux looks it up), or nil.
func sourceNode(ctx context.Context, r client.Reader, e events.Event, rev string) *node {
	o := e.InvolvedObject
	obj, err := get(ctx, r, o.APIVersion, o.Kind, o.Namespace, o.Name)
	if err != nil {
		return nil
	}
	var kind, name, ns string
	for _, field := range []string{"chartRef", "sourceRef"} {
		ref, found, _ := unstructured.NestedStringMap(obj.Object, "spec", field)
		if !found {
			continue
		}
		kind, name, ns = ref["kind"], ref["name"], ref["namespace"]
		if kind == sourcev1.HelmRepositoryKind {
			kind = sourcev1.HelmChartKind
		}
		if ns == "" {
			ns = o.Namespace
		}
	}
	if name == "" {
		return nil
	}
	src, err := get(ctx, r, sourcev1.GroupVersion.String(), kind, ns, name)
	if err != nil {
		return nil
	}
	return &node{uid: string(src.GetUID()), revision: rev}
}

func get(ctx context.Context, r client.Reader, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil, err
	}
	return u, nil
}

// isSource reports whether kind starts a deployment: its spans are roots
// unless a Kustomization applied it.
func isSource(kind string) bool {
	return slices.Contains([]string{sourcev1.GitRepositoryKind, sourcev1.HelmChartKind, sourcev1.OCIRepositoryKind,
		sourcev1.BucketKind, sourcev1.ExternalArtifactKind}, kind)
}
