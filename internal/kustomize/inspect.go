package kustomize

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/kustomize/sopsformat"
)

// inspector reads every local kustomization a build will load, before
// kustomize runs, and rejects what must never start: Helm chart inflation,
// and, when remote bases are disabled, anything kustomize would fetch.
//
// The walk cannot be left to kustomize or to the filesystem: kustomize
// fetches http(s) files with its own HTTP client and clones Git bases by
// running git, both before the filesystem sees a path. So the references are
// judged here, field by field, with the same rules kustomize uses to decide
// that a reference is remote.
type inspector struct {
	cfs         *confinedFS
	allowRemote bool
	rf          *resource.Factory
	seen        map[string]bool

	// sources are the files kustomize-controller decrypts before the
	// build (secretGenerator files and envs, patch files), in walk order,
	// each once.
	sources     []decryptSource
	seenSources map[string]bool

	// remote is set when a remote reference was allowed through: the
	// build then depends on more than the source tree.
	usedRemote bool
}

// inspect judges the local kustomizations below dir and returns the files
// to decrypt before the build.
func inspect(cfs *confinedFS, dir string, allowRemote bool) ([]decryptSource, bool, error) {
	in := &inspector{
		cfs:         cfs,
		allowRemote: allowRemote,
		rf:          provider.NewDefaultDepProvider().GetResourceFactory(),
		seen:        map[string]bool{},
		seenSources: map[string]bool{},
	}
	if err := in.kustomizationDir(dir); err != nil {
		return nil, false, err
	}
	return in.sources, in.usedRemote, nil
}

// isRemoteFile reports whether kustomize would fetch s over HTTP when
// loading it as a file.
func isRemoteFile(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

func (in *inspector) remote(file, field, ref string) error {
	if isFileURL(ref) {
		return &UnsafePathError{Path: ref, Reason: fmt.Sprintf("file:// references in %s (%s) read outside the source root", file, field)}
	}
	if in.allowRemote {
		in.usedRemote = true
		return nil
	}
	return &RemoteError{URL: ref, File: file, Field: field}
}

func (in *inspector) kustomizationDir(dir string) error {
	if in.seen[dir] {
		return nil
	}
	in.seen[dir] = true
	file, ok := findKustomizationFile(in.cfs, dir)
	if !ok {
		return in.cfs.firstViolation() // kustomize reports a missing file itself
	}
	data, err := in.cfs.ReadFile(file)
	if err != nil {
		return err
	}
	var k kustypes.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil // kustomize reports malformed kustomizations itself
	}
	k.FixKustomization()
	rel := in.cfs.rel(file)

	if len(k.HelmCharts) > 0 || k.HelmGlobals != nil {
		return fmt.Errorf("%s: helmCharts: %w; render the chart with a HelmRelease instead", rel, ErrHelmUnsupported)
	}
	for _, r := range k.Resources {
		if err := in.base(dir, rel, "resources", r, true); err != nil {
			return err
		}
	}
	for _, c := range k.Components {
		if err := in.base(dir, rel, "components", c, false); err != nil {
			return err
		}
	}
	plugins := map[string][]string{"generators": k.Generators, "transformers": k.Transformers, "validators": k.Validators}
	for _, field := range []string{"generators", "transformers", "validators"} {
		for _, p := range plugins[field] {
			if err := in.plugin(dir, rel, field, p); err != nil {
				return err
			}
		}
	}
	return in.loadedFiles(dir, rel, &k)
}

// loadedFiles checks the fields kustomize reads as files.
func (in *inspector) loadedFiles(dir, rel string, k *kustypes.Kustomization) error {
	var refs []ref
	for _, p := range k.Crds {
		refs = append(refs, ref{"crds", p})
	}
	for _, p := range k.Configurations {
		refs = append(refs, ref{"configurations", p})
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // SA1019: kustomize still builds this legacy field, so its files are read too
		if !strings.Contains(string(p), "\n") {
			refs = append(refs, ref{"patchesStrategicMerge", string(p)})
		}
	}
	for _, p := range k.Patches {
		refs = append(refs, ref{"patches", p.Path})
	}
	for _, p := range k.PatchesJson6902 { //nolint:staticcheck // SA1019: kustomize still builds this legacy field, so its files are read too
		refs = append(refs, ref{"patchesJson6902", p.Path})
	}
	for _, r := range k.Replacements {
		refs = append(refs, ref{"replacements", r.Path})
	}
	if p, ok := k.OpenAPI["path"]; ok {
		refs = append(refs, ref{"openapi", p})
	}
	for _, g := range k.ConfigMapGenerator {
		refs = append(refs, generatorSources("configMapGenerator", g.GeneratorArgs)...)
	}
	for _, g := range k.SecretGenerator {
		refs = append(refs, generatorSources("secretGenerator", g.GeneratorArgs)...)
	}
	for _, r := range refs {
		if err := in.file(dir, rel, r.field, r.path); err != nil {
			return err
		}
	}
	in.collectSources(dir, rel, k)
	return nil
}

// collectSources records the files kustomize-controller decrypts before
// the build, with the format it decrypts them in: a secretGenerator file
// takes the format of its key (the file name when no key is given), an env
// file that of its name with dotenv as the default, a patch that of its
// name. configMapGenerator sources are not decrypted, as in Flux: secret
// data does not belong in a ConfigMap.
func (in *inspector) collectSources(dir, rel string, k *kustypes.Kustomization) {
	for _, g := range k.SecretGenerator {
		for _, f := range g.FileSources {
			key, p := f, f
			if i := strings.Index(f, "="); i >= 0 {
				key, p = f[:i], f[i+1:]
			}
			in.addSource(dir, rel, "secretGenerator.files", p, sopsformat.ForPath(key))
		}
		envs := g.EnvSources
		if g.EnvSource != "" {
			envs = append(envs[:len(envs):len(envs)], g.EnvSource)
		}
		for _, e := range envs {
			format := sopsformat.ForPath(e)
			if format == sopsformat.Binary {
				format = sopsformat.Dotenv
			}
			in.addSource(dir, rel, "secretGenerator.envs", e, format)
		}
	}
	for _, p := range k.Patches {
		in.addSource(dir, rel, "patches", p.Path, sopsformat.ForPath(p.Path))
	}
}

func (in *inspector) addSource(dir, rel, field, p, format string) {
	if p == "" || isRemoteFile(p) || filepath.IsAbs(p) {
		return
	}
	resolved, err := in.cfs.resolve(filepath.Join(dir, p))
	if err != nil || in.seenSources[resolved] {
		return
	}
	if info, err := in.cfs.stat(resolved); err != nil || !info.Mode().IsRegular() {
		return
	}
	in.seenSources[resolved] = true
	in.sources = append(in.sources, decryptSource{
		real: resolved, rel: in.cfs.rel(resolved), field: field, kustomization: rel, format: format,
	})
}

// ref is a kustomization field and one path it names.
type ref struct{ field, path string }

func generatorSources(field string, g kustypes.GeneratorArgs) []ref {
	var out []ref
	for _, f := range g.FileSources {
		// "key=path" or "path", split as kustomize splits it.
		if i := strings.Index(f, "="); i >= 0 {
			f = f[i+1:]
		}
		out = append(out, ref{field + ".files", f})
	}
	for _, e := range g.EnvSources {
		out = append(out, ref{field + ".envs", e})
	}
	if g.EnvSource != "" {
		out = append(out, ref{field + ".env", g.EnvSource})
	}
	return out
}

// file judges a reference kustomize loads as a single file.
func (in *inspector) file(dir, rel, field, p string) error {
	if p == "" {
		return nil
	}
	if isRemoteFile(p) {
		return in.remote(rel, field, p)
	}
	_, err := in.local(dir, p)
	var unsafe *UnsafePathError
	if errors.As(err, &unsafe) {
		return fmt.Errorf("%s: %s entry %q: %w", rel, field, p, err)
	}
	return nil
}

// local resolves a path a local kustomization names, relative to its
// directory. Absolute paths are refused outright: the root's location is
// arbitrary, and with remote bases allowed one could reach other builds'
// clones.
func (in *inspector) local(dir, p string) (string, error) {
	if filepath.IsAbs(p) {
		return "", in.cfs.refuse(&UnsafePathError{Path: p, Reason: "absolute paths are not allowed"})
	}
	return in.cfs.resolve(filepath.Join(dir, p))
}

// base judges a resources or components entry: a local file (resources
// only), a local directory holding a kustomization, or a remote base.
func (in *inspector) base(dir, rel, field, entry string, fileAllowed bool) error {
	// kustomize first loads a resources entry as a file, which fetches
	// http(s) URLs; a components entry goes straight to the Git check.
	if fileAllowed && isRemoteFile(entry) {
		return in.remote(rel, field, entry)
	}
	resolved, err := in.local(dir, entry)
	if err != nil {
		return fmt.Errorf("%s: %s entry %q: %w", rel, field, entry, err)
	}
	info, statErr := in.cfs.stat(resolved)
	if fileAllowed && statErr == nil && info.Mode().IsRegular() {
		return nil
	}
	if looksLikeGitURL(entry) {
		return in.remote(rel, field, entry)
	}
	if statErr == nil && info.IsDir() {
		return in.kustomizationDir(resolved)
	}
	return nil
}

// plugin judges a generators/transformers/validators entry: inline plugin
// configuration, a file of them, or a directory whose kustomization lists
// them.
func (in *inspector) plugin(dir, rel, field, entry string) error {
	if docs, err := in.rf.SliceFromBytes([]byte(entry)); err == nil && len(docs) > 0 {
		return in.pluginConfigs(dir, rel, field, docs)
	}
	if isRemoteFile(entry) || looksLikeGitURL(entry) {
		return in.remote(rel, field, entry)
	}
	resolved, err := in.local(dir, entry)
	if err != nil {
		return fmt.Errorf("%s: %s entry %q: %w", rel, field, entry, err)
	}
	info, err := in.cfs.stat(resolved)
	switch {
	case err != nil:
		return nil
	case info.IsDir():
		return in.kustomizationDir(resolved)
	}
	data, err := in.cfs.ReadFile(resolved)
	if err != nil {
		return err
	}
	docs, err := in.rf.SliceFromBytes(data)
	if err != nil {
		return nil // kustomize reports it
	}
	return in.pluginConfigs(dir, rel, field, docs)
}

// pluginKeysWithPaths are the keys under which builtin plugin
// configurations name files to load.
var pluginKeysWithPaths = map[string]bool{
	"path": true, "files": true, "envs": true, "env": true,
	"valuesFile": true, "additionalValuesFiles": true,
}

func (in *inspector) pluginConfigs(dir, rel, field string, docs []*resource.Resource) error {
	for _, d := range docs {
		if d.GetKind() == "HelmChartInflationGenerator" {
			return fmt.Errorf("%s: %s: %w", rel, field, ErrHelmUnsupported)
		}
		m, err := d.Map()
		if err != nil {
			continue
		}
		var paths []string
		collectPaths(m, &paths)
		for _, p := range paths {
			if err := in.file(dir, rel, field, p); err != nil {
				return err
			}
		}
	}
	return nil
}

func collectPaths(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if pluginKeysWithPaths[k] {
				switch s := val.(type) {
				case string:
					*out = append(*out, fileSourcePath(k, s))
				case []any:
					for _, e := range s {
						if str, ok := e.(string); ok {
							*out = append(*out, fileSourcePath(k, str))
						}
					}
				}
			}
			collectPaths(val, out)
		}
	case []any:
		for _, e := range t {
			collectPaths(e, out)
		}
	}
}

func fileSourcePath(key, s string) string {
	if key == "files" {
		if i := strings.Index(s, "="); i >= 0 {
			return s[i+1:]
		}
	}
	return s
}
