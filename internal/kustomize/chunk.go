package kustomize

import (
	"bytes"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// chunkSize is how many files of a generated kustomization one kustomize
// run reads when the build is split (see chunkable).
var chunkSize = 100

// chunkable reports whether a generated kustomization may be built as a
// series of smaller ones, each listing chunkSize of its files, and the
// results concatenated. kustomize's resource map checks every resource it
// adds, and every resource the namespace transformer moves, against all
// the others by parsing their identity from YAML each time: a build of n
// objects costs n² such parses, 14 CPU-seconds for 1,500 ConfigMaps.
//
// The split changes nothing when nothing of the build looks across files:
// the kustomization lists plain files only (no directory, so no base with
// generators whose new names others refer to), no file asks for a name
// hash (kustomize.config.k8s.io/needs-hash renames the object, and
// references to it follow), and the spec adds only a target namespace,
// which moves each object on its own. Name prefixes and suffixes
// (references follow renames), patches, images and components (selectors
// over all objects) and build metadata keep the single run. What a split
// run cannot see is checked on its result, and then, as on any error, the
// build runs again whole, so that kustomize reports a fault in its own
// words: two files defining the same object, and the kinds whose
// references kustomize completes with the namespace of the object they
// name (the subjects of RoleBindings and ClusterRoleBindings, the services
// of webhook configurations; see linkedKinds).
func chunkable(rk *rootKustomization, cfs *confinedFS, dir string, opts *BuildOptions) bool {
	if !rk.generated || len(rk.resources) <= chunkSize {
		return false
	}
	if opts.NamePrefix != "" || opts.NameSuffix != "" || len(opts.Patches) > 0 || len(opts.Images) > 0 ||
		len(opts.Components) > 0 || len(opts.BuildMetadata) > 0 {
		return false
	}
	for _, r := range rk.resources {
		p := filepath.Join(dir, filepath.FromSlash(r))
		if cfs.IsDir(p) {
			return false
		}
		data, err := cfs.ReadFile(p)
		if err != nil || bytes.Contains(data, []byte(needsHashAnnotation)) {
			return false
		}
	}
	return true
}

// needsHashAnnotation makes kustomize add a content hash to an object's
// name, as it does for generated ConfigMaps and Secrets.
const needsHashAnnotation = "kustomize.config.k8s.io/needs-hash"

// linkedKinds are the kinds whose references to other objects kustomize's
// name reference transformer rewrites with the namespace of the object
// referred to (map references in its built-in configuration): when they
// and the objects they name fall in different runs, the result would
// differ from one run's.
var linkedKinds = map[schema.GroupKind]bool{
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
}

// buildChunked runs kustomize once per chunkSize files of rk and returns
// the objects in the order one run would, or ok false when two chunks
// define the same object.
func buildChunked(cfs *confinedFS, dir string, rk *rootKustomization, opts *BuildOptions) (objects []*unstructured.Unstructured, ok bool, err error) {
	defer cfs.setOverlay(rk.file, rk.data)
	seen := map[objectKey]bool{}
	for start := 0; start < len(rk.resources); start += chunkSize {
		chunk := rk.resources[start:min(start+chunkSize, len(rk.resources))]
		data, err := yaml.Marshal(kustypes.Kustomization{
			TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
			Resources: chunk,
			Namespace: opts.TargetNamespace,
		})
		if err != nil {
			return nil, false, err
		}
		cfs.setOverlay(rk.file, data)
		rm, err := runKustomize(cfs, dir, false)
		if err != nil {
			return nil, false, err
		}
		objs, err := toObjects(rm)
		if err != nil {
			return nil, false, err
		}
		for _, o := range objs {
			k := keyOf(o)
			if seen[k] || linkedKinds[k.groupKind] {
				return nil, false, nil
			}
			seen[k] = true
		}
		objects = append(objects, objs...)
	}
	return objects, true, nil
}

// objectKey is an object's identity, broader than kustomize's: without
// the API version, and with the empty namespace and "default" taken as one
// (kustomize's effective namespace). Two objects that share one either
// conflict for kustomize or could be taken for one another when it
// resolves a reference: only one run tells which.
type objectKey struct {
	groupKind       schema.GroupKind
	namespace, name string
}

func keyOf(o *unstructured.Unstructured) objectKey {
	ns := o.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	return objectKey{groupKind: o.GroupVersionKind().GroupKind(), namespace: ns, name: o.GetName()}
}
