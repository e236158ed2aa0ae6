package release

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// Origin labels Flux's helm-controller puts on every object of a release,
// naming the HelmRelease; `flux tree` and `weir trace` follow them.
const (
	OriginNameLabel      = "helm.toolkit.fluxcd.io/name"
	OriginNamespaceLabel = "helm.toolkit.fluxcd.io/namespace"
)

// originLabels is a Helm post-renderer adding the origin labels.
type originLabels struct{ name, namespace string }

// Run sets the labels on every object of the rendered stream, keeping the
// documents' order and the annotations Helm uses to split them again.
func (o originLabels) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	nodes, err := (&kio.ByteReader{Reader: in, OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("reading rendered manifests: %w", err)
	}
	for _, n := range nodes {
		if n.IsNilOrEmpty() {
			continue
		}
		labels := n.GetLabels()
		labels[OriginNameLabel], labels[OriginNamespaceLabel] = o.name, o.namespace
		if err := n.SetLabels(labels); err != nil {
			return nil, fmt.Errorf("labelling %s/%s: %w", n.GetKind(), n.GetName(), err)
		}
	}
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, fmt.Errorf("writing rendered manifests: %w", err)
	}
	return &out, nil
}
