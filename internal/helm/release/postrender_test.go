package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// TestPostRenderer runs the whole chain over testdata/postrender/input.yaml
// for each spec and compares the stream Helm gets back with
// testdata/postrender/<name>.golden.
func TestPostRenderer(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "postrender", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		spec string // HelmReleaseSpec in YAML
	}{
		{name: "origin-only", spec: `{}`},
		{name: "strategic-merge", spec: `
postRenderers:
- kustomize:
    patches:
    - target: {kind: Deployment, name: app}
      patch: |
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: app
          labels:
            patched: "yes"
        spec:
          replicas: 3
`},
		{name: "json6902-and-images", spec: `
postRenderers:
- kustomize:
    patches:
    - target: {kind: ConfigMap}
      patch: |
        - op: add
          path: /data/added
          value: by-json6902
    images:
    - name: example.com/app
      newName: registry.local/app
      newTag: v2
`},
		{name: "in-order", spec: `
postRenderers:
- kustomize:
    patches:
    - target: {kind: ConfigMap}
      patch: |
        - op: add
          path: /data/step
          value: first
- kustomize:
    patches:
    - target: {kind: ConfigMap}
      patch: |
        - op: replace
          path: /data/step
          value: second
`},
		{name: "common-metadata", spec: `
postRenderers:
- kustomize:
    patches:
    - patch: |
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: app-config
          labels:
            helm.toolkit.fluxcd.io/name: spoofed
            team: from-patch
commonMetadata:
  labels:
    team: platform
  annotations:
    owner: sre
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"}}
			if err := yaml.UnmarshalStrict([]byte(tc.spec), &hr.Spec); err != nil {
				t.Fatal(err)
			}
			out, err := PostRenderer(hr).Run(bytes.NewBuffer(append([]byte(nil), in...)))
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", "postrender", tc.name+".golden"), out.Bytes())
		})
	}
}

func TestPostRendererErrors(t *testing.T) {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "apps"}}
	hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
		Images:  []meta.Image{{Name: "x", NewTag: "y"}},
		Patches: []meta.Patch{{Patch: "- op: replace\n  path: /data/missing\n  value: x\n", Target: &meta.Selector{Kind: "ConfigMap"}}},
	}}}
	_, err := PostRenderer(hr).Run(bytes.NewBufferString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	if err == nil || !strings.Contains(err.Error(), "kustomize post-renderer") {
		t.Errorf("err = %v, want a kustomize post-renderer error", err)
	}
	// Hooks-only charts hand Helm's post-renderer an empty stream.
	out, err := PostRenderer(hr).Run(bytes.NewBufferString(""))
	if err != nil || strings.TrimSpace(out.String()) != "" {
		t.Errorf("empty stream: %q, %v", out, err)
	}
}

// TestDigests pins the digests to helm-controller's encoding: sha256 of
// the JSON of the field and a newline.
func TestDigests(t *testing.T) {
	hr := &helmv2.HelmRelease{}
	// sha256("null\n")
	const null = "sha256:38e0b9de817f645c4bec37c0d4a3e58baecccb040f5718dc069a72c7385a0bed"
	if got := PostRenderersDigest(hr); got != null {
		t.Errorf("no postRenderers: %s", got)
	}
	if got := CommonMetadataDigest(hr); got != null {
		t.Errorf("no commonMetadata: %s", got)
	}
	hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Images: []meta.Image{{Name: "a", NewTag: "b"}}}}}
	sum := sha256.Sum256([]byte(`[{"kustomize":{"images":[{"name":"a","newTag":"b"}]}}]` + "\n"))
	if got, want := PostRenderersDigest(hr), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("PostRenderersDigest = %s, want %s", got, want)
	}
}
