package tracecmd

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// generatorWidth aligns a trace that goes through an ExternalArtifact,
// whose labels run up to "ArtifactGenerator:".
const generatorWidth = 19

// external writes an ExternalArtifact section: its revision and the origin
// revision its producer recorded (an ArtifactGenerator's originRevision).
func (r *report) external(ea *unstructured.Unstructured) {
	r.line(kinds.ExternalArtifact.Kind+":", ea.GetName())
	r.line("Namespace:", ea.GetNamespace())
	if rev := kinds.ExternalArtifact.Revision(ea); rev != "" {
		r.line("Revision:", rev)
	}
	md, _, _ := unstructured.NestedStringMap(ea.Object, "status", "artifact", "metadata")
	if v := md[sourceextensionsv1beta1.OriginRevisionAnnotation]; v != "" {
		r.line("Origin Revision:", v)
	}
	r.status(ea, true)
}

// generator follows an ExternalArtifact to the ArtifactGenerator that
// produced it (spec.sourceRef) and writes its section, then a section for
// each of the generator's sources. An ExternalArtifact from another
// producer ends the trace.
func (r *report) generator(ctx context.Context, c client.Client, ea *unstructured.Unstructured) error {
	ref, ok, _ := unstructured.NestedStringMap(ea.Object, "spec", "sourceRef")
	if !ok || ref["kind"] != kinds.ArtifactGenerator.Kind {
		return nil
	}
	ns := ref["namespace"]
	if ns == "" {
		ns = ea.GetNamespace()
	}
	ag, err := get(ctx, c, kinds.ArtifactGenerator, client.ObjectKey{Namespace: ns, Name: ref["name"]})
	if err != nil {
		return err
	}
	r.separator()
	r.line(kinds.ArtifactGenerator.Kind+":", ag.GetName())
	r.line("Namespace:", ag.GetNamespace())
	r.status(ag, true)
	sources, _, _ := unstructured.NestedSlice(ag.Object, "spec", "sources")
	for _, s := range sources {
		m, _ := s.(map[string]any)
		k, known := kinds.ByKind(str(&unstructured.Unstructured{Object: m}, "kind"))
		if !known || !k.Source {
			continue
		}
		srcNS, _ := m["namespace"].(string)
		if srcNS == "" {
			srcNS = ag.GetNamespace()
		}
		name, _ := m["name"].(string)
		src, err := get(ctx, c, k, client.ObjectKey{Namespace: srcNS, Name: name})
		if err != nil {
			return err
		}
		r.separator()
		if k.Kind == kinds.ExternalArtifact.Kind {
			r.external(src)
			continue
		}
		r.source(src, k)
	}
	return nil
}

// chartRefArtifact reads the ExternalArtifact a HelmRelease's
// spec.chartRef names, or nil when the chart comes from elsewhere.
func chartRefArtifact(ctx context.Context, c client.Client, hr *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ref, ok, _ := unstructured.NestedStringMap(hr.Object, "spec", "chartRef")
	if !ok || ref["kind"] != kinds.ExternalArtifact.Kind {
		return nil, nil
	}
	ns := ref["namespace"]
	if ns == "" {
		ns = hr.GetNamespace()
	}
	return get(ctx, c, kinds.ExternalArtifact, client.ObjectKey{Namespace: ns, Name: ref["name"]})
}
