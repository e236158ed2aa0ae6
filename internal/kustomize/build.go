package kustomize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
)

// BuildOptions are the inputs of one build: where the source is, and the
// Kustomization spec fields that change what kustomize produces.
type BuildOptions struct {
	// Root is the directory of the extracted source artifact. Nothing
	// outside it is ever read.
	Root string
	// Tree, when set, holds the source artifact in memory in place of
	// Root (an artifact.Tree: regular files and directories, no links);
	// the build then reads nothing of the source from disk, and its
	// messages are those of the same tree on disk.
	Tree fs.FS `json:"-"`
	// Path is spec.path: the directory to build, relative to Root. Empty
	// means Root. Absolute paths and paths climbing out with ".." are
	// refused.
	Path string

	TargetNamespace string
	NamePrefix      string
	NameSuffix      string
	// CommonMetadata is applied to the objects after the checksum is taken,
	// as kustomize-controller applies it at apply time.
	CommonMetadata *kustomizev1.CommonMetadata
	Patches        []meta.Patch
	Images         []meta.Image
	// Components are relative to Path.
	Components              []string
	IgnoreMissingComponents bool
	BuildMetadata           []kustomizev1.BuildMetadataOption

	// Exclude lists paths relative to Root (slash-separated, clean) that a
	// generated kustomization leaves out: a file, or a directory with
	// everything below it. A kustomization file of the path's own is read
	// as it is. Flux has no such setting and the controller never sets it:
	// the offline fleet loader does, for the root sync it assumes for an
	// entry point, so that the root does not claim what the Kustomizations
	// it applies sync themselves (internal/fleet).
	Exclude []string `json:",omitempty"`

	// NoRemoteBases refuses, before kustomize starts, every reference it
	// would fetch: Git bases and components, http(s) resources, and URLs in
	// file references. With it set a build opens no network connection.
	NoRemoteBases bool

	// PostBuild, when set, runs variable substitution on the built objects;
	// leave it nil when the Kustomization has no spec.postBuild.
	PostBuild *PostBuild

	// Decryptor, when set, decrypts SOPS content (spec.decryption):
	// secretGenerator and patch files before kustomize reads them, objects
	// after the build. Leave it nil (not a typed nil) when the
	// Kustomization has no spec.decryption: Build then fails with
	// ErrDecryptionRequired on any SOPS content it meets, and with a
	// Decryptor it fails with ErrStillEncrypted on ciphertext left over.
	Decryptor Decryptor

	// SkipChecksum leaves Result.Checksum empty: for callers that do not
	// record it (the offline fleet loader, whose builds carry origin
	// annotations and so would not match the controller's digest anyway).
	SkipChecksum bool

	// AllowEncrypted, with no Decryptor, lets SOPS content through as it is
	// instead of failing: for rendering offline (`weir build --dry-run`),
	// never for applying.
	AllowEncrypted bool

	// Runs, when set, hears of a build split into runs (chunk.go) as it
	// goes, so that the caller can start on the first objects while the
	// last are built: before the first run it is called with the kinds of
	// all the objects the runs are to produce, and the function it
	// returns, when not nil, with each run's objects once built and
	// checked. Only builds whose objects nothing changes after kustomize
	// (no PostBuild, Decryptor or CommonMetadata) are reported, so those
	// objects are the ones Result will hold, in another order; they must
	// not be changed. The build may still fail, or fall back to one run
	// whose objects differ: Result is what counts.
	Runs func(kinds []schema.GroupKind) func([]*unstructured.Unstructured) `json:"-"`
}

// PostBuild carries the variables of spec.postBuild, already merged by the
// caller: substituteFrom entries in order, then the inline substitute map.
type PostBuild struct {
	Vars    map[string]string
	Options SubstituteOptions
}

// Result is what a build produced.
type Result struct {
	// Objects in kustomize's output order: depth first through the
	// kustomization tree, in the order the files list them (kustomize-
	// controller does not ask kustomize to sort). Deterministic for a given
	// source.
	Objects []*unstructured.Unstructured
	// Checksum is "sha256:<hex>" of the multi-document YAML of Objects after
	// substitution and before CommonMetadata (see Checksum); it is the digest
	// kustomize-controller records in status.history.
	Checksum string
	// Files are the source files the build read, relative to Root with
	// forward slashes, sorted. FindSOPSEncrypted inspects them.
	Files []string
	// Remote reports that the build loaded remote bases or URLs: its
	// output can change while the source tree stays the same.
	Remote bool
}

// Build renders a Kustomization's manifests as kustomize-controller does.
// Builds share no state of this package and may run concurrently; the
// kustomize run itself is serialized (see doc.go). ctx is checked between
// stages: kustomize cannot be interrupted once it runs.
//
// Errors name paths relative to Root. Those wrapping ErrUnsafePath,
// ErrRemoteDisallowed, ErrHelmUnsupported, ErrPluginsDisabled and
// ErrVariableNotSet cannot succeed on retry with the same source. Those
// wrapping ErrDecryptionRequired, ErrStillEncrypted or the Decryptor's own
// errors can, once the Kustomization or its key Secret changes.
//
// With a BuildCache in ctx (WithBuildCache), a build whose options and
// observed inputs match a recorded one returns a copy of its result.
func Build(ctx context.Context, opts BuildOptions) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cache := buildCacheFrom(ctx)
	key, cacheable := optionsKey(&opts)
	if cache == nil || !cacheable {
		return build(ctx, opts)
	}
	if res, ok := cache.lookup(key, &opts); ok {
		return res, nil
	}
	cache.misses.Add(1)
	res, err := build(ctx, opts)
	if err == nil {
		cache.store(key, &opts, res)
	}
	return res, err
}

// build runs one build.
func build(ctx context.Context, opts BuildOptions) (*Result, error) {
	cfs, dir, err := openPath(&opts)
	if err != nil {
		return nil, err
	}

	rk, err := prepareKustomization(cfs, dir, &opts)
	if err != nil {
		return nil, firstOf(cfs.firstViolation(), relativize(err, cfs.root))
	}
	cfs.setOverlay(rk.file, rk.data)
	sources, remote, err := inspect(cfs, dir, !opts.NoRemoteBases)
	if err != nil {
		return nil, relativize(err, cfs.root)
	}
	if err := decryptSources(cfs, sources, opts.Decryptor, opts.AllowEncrypted); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	objects, err := kustomizeObjects(cfs, dir, rk, &opts)
	if err != nil {
		return nil, err
	}
	objects, sum, err := postProcess(objects, &opts)
	if err != nil {
		return nil, err
	}
	return &Result{Objects: objects, Checksum: sum, Files: cfs.readFiles(), Remote: remote}, nil
}

// kustomizeObjects runs kustomize on rk, split in chunks when that
// changes nothing but the time it takes (chunkable).
func kustomizeObjects(cfs *confinedFS, dir string, rk *rootKustomization, opts *BuildOptions) ([]*unstructured.Unstructured, error) {
	if chunkable(rk, cfs, dir, opts) {
		// On a conflict or an error the whole build runs again, so that
		// kustomize says what is wrong in its own words.
		objects, ok, err := buildChunked(cfs, dir, rk, opts)
		if v := cfs.firstViolation(); v != nil {
			return nil, v
		}
		if ok && err == nil {
			return objects, nil
		}
	}
	rm, err := runKustomize(cfs, dir, rk.openAPI)
	if v := cfs.firstViolation(); v != nil {
		return nil, v
	}
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", classify(relativize(err, cfs.root)))
	}
	return toObjects(rm)
}

// openPath confines the build to opts.Root and resolves spec.path in it to
// the kustomization directory.
func openPath(opts *BuildOptions) (*confinedFS, string, error) {
	if opts.Root == "" && opts.Tree == nil {
		return nil, "", errors.New("source root is required")
	}
	rel, err := cleanSpecPath(opts.Path)
	if err != nil {
		return nil, "", err
	}
	cfs, err := newConfinedFS(opts.Root, opts.Tree, !opts.NoRemoteBases)
	if err != nil {
		return nil, "", err
	}
	dir, err := cfs.resolve(filepath.Join(cfs.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, "", err
	}
	if info, err := cfs.stat(dir); err != nil || !info.IsDir() {
		return nil, "", fmt.Errorf("kustomization path not found: %s", rel)
	}
	return cfs, dir, nil
}

// postProcess decrypts, substitutes and checks the built objects, computes
// their checksum and then adds the common metadata, as kustomize-controller
// does after kustomize's build.
func postProcess(objects []*unstructured.Unstructured, opts *BuildOptions) ([]*unstructured.Unstructured, string, error) {
	if opts.Decryptor != nil {
		if err := decryptObjects(objects, opts.Decryptor); err != nil {
			return nil, "", err
		}
	}
	if pb := opts.PostBuild; pb != nil {
		var err error
		objects, err = Substitute(objects, pb.Vars, pb.Options)
		if err != nil {
			return nil, "", err
		}
	}
	if !opts.AllowEncrypted || opts.Decryptor != nil {
		if err := refuseEncrypted(objects, opts.Decryptor != nil); err != nil {
			return nil, "", err
		}
	}
	sum := ""
	if !opts.SkipChecksum {
		var err error
		if sum, err = Checksum(objects); err != nil {
			return nil, "", err
		}
	}
	if cm := opts.CommonMetadata; cm != nil {
		objects = withCommonMetadata(objects, cm.Labels, cm.Annotations)
	}
	return objects, sum, nil
}

func firstOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// cleanSpecPath validates spec.path and returns it cleaned, slash-separated
// and relative ("." for the root).
func cleanSpecPath(p string) (string, error) {
	slashed := filepath.ToSlash(p)
	if strings.HasPrefix(slashed, "/") || filepath.IsAbs(p) {
		return "", &UnsafePathError{Path: p, Reason: "spec.path must be relative to the source root"}
	}
	clean := path.Clean("./" + slashed)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", &UnsafePathError{Path: p, Reason: "spec.path climbs out of the source root"}
	}
	return clean, nil
}

// krustyMu serializes kustomize runs. kustomize keeps its OpenAPI schema in
// process-wide variables, which a kustomization can replace (openapi:);
// kustomize-controller serializes its builds for the same reason.
var krustyMu sync.Mutex

func runKustomize(fs filesys.FileSystem, dir string, customOpenAPI bool) (rm resmap.ResMap, err error) {
	krustyMu.Lock()
	defer krustyMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			rm, err = nil, fmt.Errorf("recovered from kustomize build panic: %v", r)
		}
	}()
	if customOpenAPI {
		// Leave no custom schema behind for the next build.
		defer openapi.ResetOpenAPI()
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = kustypes.LoadRestrictionsNone // the confined filesystem is the boundary
	opts.PluginConfig = kustypes.DisabledPluginConfig()
	opts.PluginConfig.HelmConfig.Enabled = false
	opts.Reorder = krusty.ReorderOptionNone
	return krusty.MakeKustomizer(opts).Run(fs, dir)
}

// classify marks kustomize's refusal of plugins with ErrPluginsDisabled.
func classify(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "plugins disabled") || strings.Contains(msg, "external plugin") ||
		(strings.Contains(msg, "function") && strings.Contains(msg, "not enabled")) {
		return fmt.Errorf("%w: %w", ErrPluginsDisabled, err)
	}
	return err
}

// toObjects converts kustomize's resources, refusing any without the fields
// every Kubernetes object has.
func toObjects(rm resmap.ResMap) ([]*unstructured.Unstructured, error) {
	resources := rm.Resources()
	objects := make([]*unstructured.Unstructured, 0, len(resources))
	for _, res := range resources {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return nil, fmt.Errorf("failed to decode Kubernetes apiVersion, kind and name from: apiVersion=%q kind=%q name=%q",
				res.GetApiVersion(), res.GetKind(), res.GetName())
		}
		if obj, ok := objectOf(res); ok {
			objects = append(objects, obj)
			continue
		}
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		obj, err := objectFromJSON(data)
		if err != nil {
			return nil, err
		}
		objects = append(objects, obj)
	}
	return objects, nil
}

func objectFromJSON(data []byte) (*unstructured.Unstructured, error) {
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// withCommonMetadata returns copies of objects with labels and annotations
// set on their metadata, replacing values under the same keys.
func withCommonMetadata(objects []*unstructured.Unstructured, labels, annotations map[string]string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objects))
	for i, o := range objects {
		c := o.DeepCopy()
		if len(labels) > 0 {
			l := c.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			for k, v := range labels {
				l[k] = v
			}
			c.SetLabels(l)
		}
		if len(annotations) > 0 {
			a := c.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			for k, v := range annotations {
				a[k] = v
			}
			c.SetAnnotations(a)
		}
		out[i] = c
	}
	return out
}

// ToYAML renders objects as one multi-document YAML stream: each object
// with sorted keys, documents separated by "---\n". This is byte for byte
// the stream kustomize-controller builds (kustomize's resmap AsYaml), so its
// digest matches the one in Flux's status.history.
func ToYAML(objects []*unstructured.Unstructured) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objects {
		if i > 0 {
			buf.WriteString("---\n")
		}
		if y, ok := yamlOf(o.Object); ok {
			buf.Write(y)
			continue
		}
		j, err := json.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			return nil, err
		}
		buf.Write(y)
	}
	return buf.Bytes(), nil
}

// Checksum is "sha256:" followed by the lower-case hex SHA-256 of
// ToYAML(objects): the format of an OCI digest, and the value
// kustomize-controller stores as status.history[].digest.
func Checksum(objects []*unstructured.Unstructured) (string, error) {
	y, err := ToYAML(objects)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(y)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
