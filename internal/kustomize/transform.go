package kustomize

import (
	"bytes"
	"fmt"
	"path/filepath"

	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
)

// transformDir is where Transform lays out its in-memory kustomization.
const transformDir = "/transform"

// Transform runs kustomize's patches and images over manifests, a
// multi-document YAML stream, and returns the transformed stream in the
// same order: the kustomize post-renderer of a HelmRelease. The patches
// and images go through the very code that merges a Kustomization's
// spec.patches and spec.images, so both kinds accept and produce the same.
//
// Everything happens in memory: patches are inline by API, so nothing is
// read from disk and no remote base can be named.
func Transform(manifests []byte, patches []meta.Patch, images []meta.Image) ([]byte, error) {
	if len(bytes.TrimSpace(manifests)) == 0 || (len(patches) == 0 && len(images) == 0) {
		return manifests, nil
	}
	kus := kustypes.Kustomization{
		TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
		Resources: []string{"resources.yaml"},
	}
	addPatches(&kus, patches)
	addImages(&kus, images)
	data, err := yaml.Marshal(kus)
	if err != nil {
		return nil, err
	}
	fs := filesys.MakeFsInMemory()
	for name, content := range map[string][]byte{"kustomization.yaml": data, "resources.yaml": manifests} {
		if err := fs.WriteFile(filepath.Join(transformDir, name), content); err != nil {
			return nil, err
		}
	}
	rm, err := runKustomize(fs, transformDir, false)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	return rm.AsYaml()
}
