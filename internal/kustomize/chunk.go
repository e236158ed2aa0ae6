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
// series of smaller ones and the results put together. kustomize's
// resource map checks every resource it adds, and every resource the
// namespace transformer moves, against all the others by parsing their
// identity from YAML each time: a build of n objects costs n² such parses,
// 14 CPU-seconds for 1,500 ConfigMaps.
//
// The split changes nothing when nothing of the build looks across files:
// the kustomization lists plain files only (no directory, so no base with
// generators whose new names others refer to), no file asks for a name
// hash (kustomize.config.k8s.io/needs-hash renames the object, and
// references to it follow), and the spec adds only a target namespace,
// which moves each object on its own. Name prefixes and suffixes
// (references follow renames), patches, images and components (selectors
// over all objects) and build metadata keep the single run. The one
// look across files left, the references kustomize completes with the
// namespace of the object they name, stays within one run (linkedKinds).
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

// linkedKinds are the kinds on either side of the references that
// kustomize's name reference transformer rewrites with the namespace of
// the object referred to (the map references of its built-in
// configuration): RoleBinding and ClusterRoleBinding subjects naming
// ServiceAccounts, webhook configurations naming Services. The files that
// hold any of them are built in one run of their own.
var linkedKinds = map[schema.GroupKind]bool{
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
	{Kind: "ServiceAccount"}: true,
	{Kind: "Service"}:        true,
}

// buildChunked runs kustomize once for the files holding linked kinds and
// once per chunkSize of the others, and returns the objects in the order
// one run gives them: file by file as the kustomization lists them. Each
// run's output is matched, object by object, with what its files hold
// (rk.fileObjects); ok is false when it does not match or when two runs
// produce the same object, and the caller then runs kustomize once over
// everything, so that a fault is reported in kustomize's own words.
func buildChunked(cfs *confinedFS, dir string, rk *rootKustomization, opts *BuildOptions) (objects []*unstructured.Unstructured, ok bool, err error) {
	defer cfs.setOverlay(rk.file, rk.data)
	byFile := make(map[string][]*unstructured.Unstructured, len(rk.resources))
	seen := map[objectKey]bool{}
	built := runsSink(rk, opts)
	for _, run := range planRuns(rk) {
		objs, err := kustomizeFiles(cfs, dir, rk.file, run, opts.TargetNamespace)
		if err != nil {
			return nil, false, err
		}
		if !assign(objs, run, rk.fileObjects, byFile) {
			return nil, false, nil
		}
		for _, o := range objs {
			k := keyOf(o)
			if seen[k] {
				return nil, false, nil
			}
			seen[k] = true
		}
		if built != nil {
			built(objs)
		}
	}
	for _, r := range rk.resources {
		objects = append(objects, byFile[r]...)
	}
	return objects, true, nil
}

// runsSink returns what opts.Runs asks to be given each run's objects,
// nil when it asks for none or when post-processing will change them.
func runsSink(rk *rootKustomization, opts *BuildOptions) func([]*unstructured.Unstructured) {
	if opts.Runs == nil || opts.PostBuild != nil || opts.Decryptor != nil || opts.CommonMetadata != nil {
		return nil
	}
	var kinds []schema.GroupKind
	seen := map[schema.GroupKind]bool{}
	for _, r := range rk.resources {
		for _, o := range rk.fileObjects[r] {
			if !o.local && !seen[o.groupKind] {
				seen[o.groupKind] = true
				kinds = append(kinds, o.groupKind)
			}
		}
	}
	return opts.Runs(kinds)
}

// planRuns splits rk's files into the runs of buildChunked, each in the
// kustomization's order: the files with linked kinds, then the others by
// chunkSize.
func planRuns(rk *rootKustomization) [][]string {
	var linked, rest []string
	for _, r := range rk.resources {
		isLinked := false
		for _, o := range rk.fileObjects[r] {
			isLinked = isLinked || linkedKinds[o.groupKind]
		}
		if isLinked {
			linked = append(linked, r)
		} else {
			rest = append(rest, r)
		}
	}
	var runs [][]string
	if len(linked) > 0 {
		runs = append(runs, linked)
	}
	for start := 0; start < len(rest); start += chunkSize {
		runs = append(runs, rest[start:min(start+chunkSize, len(rest))])
	}
	return runs
}

// kustomizeFiles runs kustomize on a generated kustomization of files
// with namespace.
func kustomizeFiles(cfs *confinedFS, dir, file string, files []string, namespace string) ([]*unstructured.Unstructured, error) {
	data, err := yaml.Marshal(kustypes.Kustomization{
		TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
		Resources: files,
		Namespace: namespace,
	})
	if err != nil {
		return nil, err
	}
	cfs.setOverlay(file, data)
	rm, err := runKustomize(cfs, dir, false)
	if err != nil {
		return nil, err
	}
	return toObjects(rm)
}

// assign hands a run's objects to the files they come from, in order, and
// reports whether they are exactly what the files hold.
func assign(objs []*unstructured.Unstructured, files []string, expected map[string][]fileObject, byFile map[string][]*unstructured.Unstructured) bool {
	i := 0
	for _, f := range files {
		for _, want := range expected[f] {
			if want.local {
				continue
			}
			if i >= len(objs) || objs[i].GroupVersionKind().GroupKind() != want.groupKind || objs[i].GetName() != want.name {
				return false
			}
			byFile[f] = append(byFile[f], objs[i])
			i++
		}
	}
	return i == len(objs)
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
