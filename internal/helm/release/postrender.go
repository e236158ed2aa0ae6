package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"helm.sh/helm/v4/pkg/postrenderer"
	"sigs.k8s.io/kustomize/kyaml/kio"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/kustomize"
)

// Origin labels Flux's helm-controller puts on every object of a release,
// naming the HelmRelease; `flux tree` and `weir trace` follow them.
const (
	OriginNameLabel      = "helm.toolkit.fluxcd.io/name"
	OriginNamespaceLabel = "helm.toolkit.fluxcd.io/namespace"
)

// PostRenderer is the chain Helm runs over a release's rendered manifests,
// in helm-controller's order: spec.postRenderers in list order, then
// spec.commonMetadata, then the origin labels, which always win.
func PostRenderer(hr *helmv2.HelmRelease) postrenderer.PostRenderer {
	var c chain
	for _, pr := range hr.Spec.PostRenderers {
		if pr.Kustomize != nil {
			c = append(c, kustomizeRenderer{spec: pr.Kustomize})
		}
	}
	if cm := hr.Spec.CommonMetadata; cm != nil && (len(cm.Labels) > 0 || len(cm.Annotations) > 0) {
		c = append(c, metadataRenderer{labels: cm.Labels, annotations: cm.Annotations})
	}
	return append(c, metadataRenderer{labels: map[string]string{
		OriginNameLabel: hr.Name, OriginNamespaceLabel: hr.Namespace,
	}})
}

// chain runs post-renderers one after the other.
type chain []postrenderer.PostRenderer

func (c chain) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	for _, r := range c {
		out, err := r.Run(in)
		if err != nil {
			return nil, err
		}
		in = out
	}
	return in, nil
}

// kustomizeRenderer applies one spec.postRenderers[].kustomize entry with
// weir's kustomize package, the code behind a Kustomization's patches.
type kustomizeRenderer struct{ spec *helmv2.Kustomize }

func (k kustomizeRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out, err := kustomize.Transform(in.Bytes(), k.spec.Patches, k.spec.Images)
	if err != nil {
		return nil, fmt.Errorf("kustomize post-renderer: %w", err)
	}
	return bytes.NewBuffer(out), nil
}

// metadataRenderer sets labels and annotations on every object of the
// rendered stream, replacing values under the same keys, keeping the
// documents' order and the annotations Helm uses to split them again.
type metadataRenderer struct{ labels, annotations map[string]string }

func (m metadataRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	nodes, err := (&kio.ByteReader{Reader: in, OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("reading rendered manifests: %w", err)
	}
	for _, n := range nodes {
		if n.IsNilOrEmpty() {
			continue
		}
		if err := m.set(n.GetLabels(), n.SetLabels, m.labels); err != nil {
			return nil, fmt.Errorf("labelling %s/%s: %w", n.GetKind(), n.GetName(), err)
		}
		if err := m.set(n.GetAnnotations(), n.SetAnnotations, m.annotations); err != nil {
			return nil, fmt.Errorf("annotating %s/%s: %w", n.GetKind(), n.GetName(), err)
		}
	}
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, fmt.Errorf("writing rendered manifests: %w", err)
	}
	return &out, nil
}

func (metadataRenderer) set(have map[string]string, write func(map[string]string) error, add map[string]string) error {
	if len(add) == 0 {
		return nil
	}
	for k, v := range add {
		have[k] = v
	}
	return write(have)
}

// PostRenderersDigest is the digest of spec.postRenderers recorded in
// status.observedPostRenderersDigest; CommonMetadataDigest that of
// spec.commonMetadata in status.observedCommonMetadataDigest. Both are
// "sha256:<hex>" of the field's JSON encoding followed by a newline, as
// helm-controller computes them, so a release moved from Flux is not
// upgraded for nothing.
func PostRenderersDigest(hr *helmv2.HelmRelease) string { return jsonDigest(hr.Spec.PostRenderers) }

// CommonMetadataDigest is the digest of spec.commonMetadata; see PostRenderersDigest.
func CommonMetadataDigest(hr *helmv2.HelmRelease) string { return jsonDigest(hr.Spec.CommonMetadata) }

func jsonDigest(v any) string {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(v); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
