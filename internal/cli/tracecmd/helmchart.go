package tracecmd

import (
	"context"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/view/kinds"
)

// traceHelmChart traces a HelmChart down to the source its chart comes
// from. One applied by a Kustomization shows that chain, then the chart's
// source; one made by a HelmRelease shows the release's chain; one made by
// hand (`weir create source chart`) shows the chart and its source, where
// the flux CLI would say it is not managed by Flux.
func traceHelmChart(ctx context.Context, c client.Client, w io.Writer, chart *unstructured.Unstructured) error {
	if key, ok := managedBy(ctx, c, chart, helmGroup); ok {
		return traceHelmRelease(ctx, c, w, key, chart)
	}
	src, srcKind, err := chartSourceOf(ctx, c, chart)
	if err != nil {
		return err
	}
	var r *report
	if key, ok := managedBy(ctx, c, chart, kustomizeGroup); ok {
		if r, err = kustomizationReport(ctx, c, key, chart); err != nil {
			return err
		}
	} else {
		r = &report{width: 16}
		r.b.WriteString("\n")
		r.chart(chart)
	}
	if src != nil {
		r.separator()
		r.chartSource(src, srcKind)
	}
	_, err = io.WriteString(w, r.b.String())
	return err
}

// chartSourceOf reads the HelmRepository, GitRepository or Bucket a
// HelmChart's spec.sourceRef names in the chart's namespace; nil for a kind
// weir does not know.
func chartSourceOf(ctx context.Context, c client.Client, chart *unstructured.Unstructured) (*unstructured.Unstructured, kinds.Kind, error) {
	ref, _, _ := unstructured.NestedStringMap(chart.Object, "spec", "sourceRef")
	k, known := kinds.ByKind(ref["kind"])
	if !known || !k.Source || ref["name"] == "" {
		return nil, kinds.Kind{}, nil
	}
	src, err := get(ctx, c, k, client.ObjectKey{Namespace: chart.GetNamespace(), Name: ref["name"]})
	return src, k, err
}
