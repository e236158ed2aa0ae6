package kustomize

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
)

// placeholderNamespace keeps a kustomization generated for a directory with
// no manifests from being "empty" in kustomize's eyes; with no resources it
// changes nothing.
const placeholderNamespace = "_placeholder"

// rootKustomization is the kustomization file kustomize reads at the build
// directory: the user's, merged with the Kustomization spec, or a generated
// one. It only ever lives in memory.
type rootKustomization struct {
	file      string // absolute path kustomize will read
	data      []byte
	generated bool
	openAPI   bool // sets kustomize's process-wide OpenAPI schema
	// resources are the entries of a generated kustomization, and
	// fileObjects the objects each file entry holds, as kustomize reads
	// them (see buildChunked).
	resources   []string
	fileObjects map[string][]fileObject
}

// fileObject is what a generated kustomization's build needs to know of
// one object of a file before kustomize runs: its kind and name, which
// kustomize does not change without a name prefix or suffix, and whether
// kustomize drops it (config.kubernetes.io/local-config).
type fileObject struct {
	groupKind schema.GroupKind
	name      string
	local     bool
}

// findKustomizationFile returns the first recognized kustomization file in
// dir, in kustomize's order of preference.
func findKustomizationFile(cfs *confinedFS, dir string) (string, bool) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if cfs.Exists(p) && !cfs.IsDir(p) {
			return p, true
		}
	}
	return "", false
}

// prepareKustomization produces the root kustomization the way
// kustomize-controller does: load (or generate) the file at dir, then write
// the spec's transformations into that same file, not into an overlay.
func prepareKustomization(cfs *confinedFS, dir string, opts *BuildOptions) (*rootKustomization, error) {
	rk := &rootKustomization{}
	var raw []byte
	if file, ok := findKustomizationFile(cfs, dir); ok {
		data, err := cfs.ReadFile(file)
		if err != nil {
			return nil, err
		}
		rk.file, raw = file, data
	} else {
		resources, fileObjects, err := scanManifests(cfs, dir, opts.Exclude)
		if err != nil {
			return nil, err
		}
		gen := kustypes.Kustomization{
			TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
			Resources: resources,
		}
		if len(resources) == 0 {
			gen.Namespace = placeholderNamespace
		}
		data, err := yaml.Marshal(gen)
		if err != nil {
			return nil, err
		}
		rk.file, raw, rk.generated = filepath.Join(dir, konfig.DefaultKustomizationFileName()), data, true
		rk.resources, rk.fileObjects = resources, fileObjects
	}

	// A lenient decode, as kustomize-controller does: unknown fields in the
	// user's file are dropped here instead of failing kustomize's strict read.
	kus := kustypes.Kustomization{
		TypeMeta: kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
	}
	if err := yaml.Unmarshal(raw, &kus); err != nil {
		return nil, fmt.Errorf("%s: %w", cfs.rel(rk.file), err)
	}
	if err := mergeSpec(cfs, dir, &kus, opts, rk.generated); err != nil {
		return nil, err
	}
	data, err := yaml.Marshal(kus)
	if err != nil {
		return nil, err
	}
	rk.data = data
	rk.openAPI = len(kus.OpenAPI) > 0
	return rk, nil
}

// mergeSpec writes the spec fields that change the build into kus.
func mergeSpec(cfs *confinedFS, dir string, kus *kustypes.Kustomization, opts *BuildOptions, generated bool) error {
	// kustomize refuses a kustomization it considers empty; one that lists
	// no resources (only generators, components, ...) is kept buildable the
	// way kustomize-controller does it.
	if !generated && len(kus.Resources) == 0 && !slices.Contains(kus.BuildMetadata, kustypes.OriginAnnotations) {
		kus.BuildMetadata = append(kus.BuildMetadata, kustypes.OriginAnnotations)
	}
	if len(opts.BuildMetadata) > 0 {
		metadata := make([]string, 0, len(opts.BuildMetadata))
		for _, m := range opts.BuildMetadata {
			metadata = append(metadata, string(m))
		}
		kus.BuildMetadata = metadata
	}
	if opts.TargetNamespace != "" {
		kus.Namespace = opts.TargetNamespace
	}
	if opts.NamePrefix != "" {
		kus.NamePrefix = opts.NamePrefix
	}
	if opts.NameSuffix != "" {
		kus.NameSuffix = opts.NameSuffix
	}
	addPatches(kus, opts.Patches)
	for _, c := range opts.Components {
		if !isLocalRelative(c) {
			return fmt.Errorf("component path %q must be local and relative: %w", c, ErrUnsafePath)
		}
		if opts.IgnoreMissingComponents && !cfs.Exists(filepath.Join(dir, c)) {
			if v := cfs.firstViolation(); v != nil {
				return v
			}
			continue
		}
		kus.Components = append(kus.Components, c)
	}
	addImages(kus, opts.Images)
	return nil
}

// addPatches appends patches to kus.patches, after the file's own.
func addPatches(kus *kustypes.Kustomization, patches []meta.Patch) {
	for _, p := range patches {
		kus.Patches = append(kus.Patches, kustypes.Patch{Patch: p.Patch, Target: toKustSelector(p.Target)})
	}
}

// addImages merges images into kus.images, field by field.
func addImages(kus *kustypes.Kustomization, images []meta.Image) {
	for _, img := range images {
		mergeImage(kus, img)
	}
}

// mergeImage overrides, field by field, the entry of kus.images with the
// same name, or appends one.
func mergeImage(kus *kustypes.Kustomization, img meta.Image) {
	for i := range kus.Images {
		if kus.Images[i].Name != img.Name {
			continue
		}
		if img.NewName != "" {
			kus.Images[i].NewName = img.NewName
		}
		if img.NewTag != "" {
			kus.Images[i].NewTag = img.NewTag
		}
		if img.Digest != "" {
			kus.Images[i].Digest = img.Digest
		}
		return
	}
	kus.Images = append(kus.Images, kustypes.Image{
		Name: img.Name, NewName: img.NewName, NewTag: img.NewTag, Digest: img.Digest,
	})
}

func toKustSelector(s *meta.Selector) *kustypes.Selector {
	if s == nil {
		return nil
	}
	return &kustypes.Selector{
		ResId: resid.ResId{
			Gvk:       resid.Gvk{Group: s.Group, Version: s.Version, Kind: s.Kind},
			Name:      s.Name,
			Namespace: s.Namespace,
		},
		LabelSelector:      s.LabelSelector,
		AnnotationSelector: s.AnnotationSelector,
	}
}

// isLocalRelative reports whether p names a path inside the source, not a
// URL or an absolute path.
func isLocalRelative(p string) bool {
	if looksLikeGitURL(p) || isRemoteFile(p) || strings.HasPrefix(strings.ToLower(p), "gh:") {
		return false
	}
	if filepath.IsAbs(p) || filepath.IsAbs(strings.TrimPrefix(strings.ToLower(p), "file://")) {
		return false
	}
	return true
}

// scanManifests lists, for a generated kustomization, every YAML file below
// dir and every subdirectory holding its own kustomization (which is listed
// instead of descended into). Like kustomize-controller, a .yaml or .yml
// file that does not decode as Kubernetes objects fails the build: it must
// be excluded at the source (.sourceignore, spec.ignore), not skipped here.
// Paths in exclude (relative to the root) are left out, directories with
// everything below them (BuildOptions.Exclude).
func scanManifests(cfs *confinedFS, dir string, exclude []string) ([]string, map[string][]fileObject, error) {
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	var entries []string
	objects := map[string][]fileObject{}
	err := cfs.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		entry := "./" + filepath.ToSlash(rel)
		if excluded(cfs.rel(path), exclude) {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info.IsDir() {
			if _, ok := findKustomizationFile(cfs, path); ok {
				entries = append(entries, entry)
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := cfs.ReadFile(path)
		if err != nil {
			return err
		}
		resources, err := decodeManifests(rf, data)
		if err != nil {
			return fmt.Errorf("failed to decode Kubernetes YAML from %s: %w", cfs.rel(path), err)
		}
		entries = append(entries, entry)
		for _, r := range resources {
			local, ok := r.GetAnnotations()[konfig.IgnoredByKustomizeAnnotation]
			objects[entry] = append(objects[entry], fileObject{
				groupKind: schema.GroupKind{Group: r.GetGvk().Group, Kind: r.GetKind()},
				name:      r.GetName(),
				local:     ok && local != "false",
			})
		}
		return nil
	})
	return entries, objects, err
}

// excluded reports whether rel, relative to the root, is one of exclude or
// lies below one.
func excluded(rel string, exclude []string) bool {
	for _, e := range exclude {
		if rel == e || strings.HasPrefix(rel, e+"/") {
			return true
		}
	}
	return false
}

// decodeManifests parses data as kustomize would; its YAML code is known to
// panic on some malformed input.
func decodeManifests(rf *resource.Factory, data []byte) (resources []*resource.Resource, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered from panic while parsing YAML: %v", r)
		}
	}()
	return rf.SliceFromBytes(data)
}

var gitUserPrefix = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// looksLikeGitURL reports whether kustomize would treat s as a Git
// repository to clone when it is used as a base or component: the forms its
// repo-spec parser accepts (an optional "git::" prefix, then ssh://,
// https://, http:// or file://, an scp-like user@host:path, or a
// github.com/ or github.com: prefix).
func looksLikeGitURL(s string) bool {
	if len(s) >= 5 && strings.EqualFold(s[:5], "git::") {
		s = s[5:]
	}
	l := strings.ToLower(s)
	for _, scheme := range []string{"ssh://", "https://", "http://", "file://"} {
		if strings.HasPrefix(l, scheme) {
			return true
		}
	}
	return gitUserPrefix.MatchString(s) ||
		strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:")
}

// isFileURL reports whether s asks kustomize to clone a repository from the
// local disk, outside any confinement.
func isFileURL(s string) bool {
	l := strings.TrimPrefix(strings.ToLower(s), "git::")
	return strings.HasPrefix(l, "file://")
}

// FromSpec returns the build options a Kustomization's spec asks for. The
// caller still decides NoRemoteBases (a controller flag) and supplies the
// post-build variables, which live in the cluster.
func FromSpec(root string, spec *kustomizev1.KustomizationSpec) BuildOptions {
	opts := BuildOptions{
		Root:                    root,
		Path:                    spec.Path,
		TargetNamespace:         spec.TargetNamespace,
		NamePrefix:              spec.NamePrefix,
		NameSuffix:              spec.NameSuffix,
		CommonMetadata:          spec.CommonMetadata,
		Patches:                 spec.Patches,
		Images:                  spec.Images,
		Components:              spec.Components,
		IgnoreMissingComponents: spec.IgnoreMissingComponents,
		BuildMetadata:           spec.BuildMetadata,
	}
	if pb := spec.PostBuild; pb != nil {
		opts.PostBuild = &PostBuild{Options: SubstituteOptions{Strategy: pb.SubstituteStrategy}}
	}
	return opts
}
