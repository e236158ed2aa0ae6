package fleet

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/source/generate"
)

// Options say what to load and how to build it.
type Options struct {
	// Dir is the repository on disk. Ignored when FS is set.
	Dir string
	// FS, when set, is the repository instead of Dir (a Git revision read
	// without a checkout, say). It is copied into a temporary directory
	// that Load removes before it returns: kustomize.Build reads a
	// directory it confines itself to.
	FS fs.FS
	// Paths are the entry points, repository-relative; empty means every
	// one Load finds (see doc.go).
	Paths []string
	// Within is the directory, repository-relative, where Load looks for
	// entry points when Paths is empty; empty means the whole repository.
	// `weir lint DIR` sets it when DIR lies inside a Git work tree, whose
	// root is then Dir: spec.path is relative to the source's root, not
	// to DIR. A Within below the root holding no entry point is one
	// itself.
	Within string
	// Sources maps a source ("namespace/name", or "name" for any
	// namespace) to the directory that stands for its artifact, for
	// sources that are not this repository.
	Sources map[string]string
	// SourceURLs are URLs that mean this repository besides its Git
	// remotes.
	SourceURLs []string
	// DecryptKeys are age or PGP private keys, by file name (the
	// extension decides: .agekey or .asc), used for every Kustomization
	// with spec.decryption. Without them SOPS content stays encrypted.
	DecryptKeys map[string][]byte
	// NoRemoteBases refuses remote kustomize bases instead of fetching
	// them (--no-remote-bases).
	NoRemoteBases bool
	// Assume names objects the clusters hold that no repository file
	// defines, as "Kind/namespace/name": sources or Secrets that bootstrap
	// creates by hand. An assumed source is present but not local; an
	// assumed ConfigMap or Secret is present and empty.
	Assume []string
	// Generate bounds each ExternalArtifact tree built from an
	// ArtifactGenerator of the graph (generate's defaults when zero).
	Generate generate.Options
}

// Graph is what the clusters of a repository would hold.
type Graph struct {
	// Dir is the directory the repository was loaded from.
	Dir string
	// Clusters holds one entry per entry point, by path.
	Clusters []*Cluster
}

// Cluster is the graph one entry point yields: its root Kustomization and
// everything that follows from it.
type Cluster struct {
	// Entry is the entry point, repository-relative ("clusters/dev").
	Entry string
	// Root is the Kustomization that builds Entry.
	Root *Node
	// Nodes are the Kustomizations and HelmReleases, in the order they
	// were found (the root first).
	Nodes []*Node
	// Sources are the source objects of the graph, by Key.
	Sources map[string]*Source
	// Applied maps the Key of every object a Kustomization applies to
	// the nodes applying it, in build order.
	Applied map[string][]*Node
	// MissingRoot reports an entry point with no root sync of its own
	// while another entry point of the repository has one: the
	// repository's convention says this cluster is not synced. Its Root
	// is then implicit and not found by Node.
	MissingRoot bool
	// Generators are the ArtifactGenerators the graph yields, in the
	// order found.
	Generators []*Generator

	// objects are the applied objects by Key, as the first node applying
	// them built them: what the offline reader serves.
	objects map[string]*unstructured.Unstructured
}

// Position is where something is written: a repository-relative file
// (forward slashes) and a 1-based line; Line is 0 when unknown.
type Position struct {
	File string
	Line int
}

// Node is a Kustomization or a HelmRelease of a cluster.
type Node struct {
	// Object is the object as the cluster would get it (after its
	// parent's build and substitution).
	Object *unstructured.Unstructured
	// Kustomization or HelmRelease is Object decoded; exactly one is set.
	Kustomization *kustomizev1.Kustomization
	HelmRelease   *helmv2.HelmRelease
	// Position is where Object is defined.
	Position
	// Implicit marks a root Kustomization the repository does not hold,
	// assumed as bootstrap creates it (flux-system/flux-system).
	Implicit bool
	// Parent is the Kustomization that applies this node; nil for the
	// root.
	Parent *Node
	// Source is the Key of the source the node reads; SourceDir the
	// directory standing for its artifact, "" when it is not local.
	Source    string
	SourceDir string
	// Built reports that the node was built: a Kustomization with a local
	// source. Objects, Origins, Files and Err are its result.
	Built bool
	// Objects are what the build yields; Origins their positions, index
	// by index. When strict substitution fails (Err wraps
	// kustomize.ErrVariableNotSet) they are what the build yields with
	// undefined variables left empty, so the graph below is still loaded.
	Objects []*unstructured.Unstructured
	Origins []Position
	// Err is the build error, nil when the build succeeded.
	Err error
	// Vars are the post-build variables it was built with.
	Vars map[string]string
	// Files are the files the build read, repository-relative.
	Files []string
	// InputDigest is "sha256:<hex>" of everything the build read: the
	// files (or, when the build failed, every file under spec.path), the
	// spec and the variables. Equal digests build equal objects.
	InputDigest string
}

// Source is a source object of a cluster.
type Source struct {
	Object *unstructured.Unstructured
	Position
	// URL is spec.url.
	URL string
	// Dir is the directory standing for its artifact, "" when it is not
	// local (not this repository and not given in Options.Sources).
	Dir string
	// Implicit marks the root's source assumed as bootstrap creates it.
	Implicit bool
	// Assumed marks a source named in Options.Assume.
	Assumed bool
}

// Load builds the graph of every entry point of the repository.
func Load(ctx context.Context, opts Options) (*Graph, error) {
	dir, cleanup, err := repositoryDir(opts)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	l := newLoader(dir, opts)
	defer l.removeGenerated()
	scope := cleanRel(opts.Within)
	entries, found := make([]string, 0, len(opts.Paths)), len(opts.Paths) == 0
	for _, p := range opts.Paths {
		entries = append(entries, cleanRel(p))
	}
	scan := entries
	if found {
		scan = []string{scope}
	}
	for _, d := range scan {
		if err := l.confine(d); err != nil {
			return nil, err
		}
	}
	if err := l.scanRoots(scan); err != nil {
		return nil, err
	}
	if found {
		if entries, err = l.findEntries(scope); err != nil {
			return nil, err
		}
	}
	g := &Graph{Dir: dir}
	if opts.FS != nil {
		g.Dir = ""
	}
	for _, e := range entries {
		c, err := l.loadCluster(ctx, e)
		if err != nil {
			return nil, err
		}
		g.Clusters = append(g.Clusters, c)
	}
	if found {
		g.Clusters = l.dropIncluded(g.Clusters)
	}
	l.markMissingRoots(g.Clusters)
	return g, nil
}

// dropIncluded drops the clusters/* directories found without a root sync
// whose files another cluster's root build reads: a shared base such as
// clusters/base is part of other clusters, not one of its own.
func (l *loader) dropIncluded(clusters []*Cluster) []*Cluster {
	var out []*Cluster
	for _, c := range clusters {
		if _, ok := l.roots[c.Entry]; ok || !includedElsewhere(c, clusters) {
			out = append(out, c)
		}
	}
	return out
}

func includedElsewhere(c *Cluster, clusters []*Cluster) bool {
	for _, other := range clusters {
		if other == c {
			continue
		}
		for _, f := range other.Root.Files {
			if within(f, c.Entry) {
				return true
			}
		}
	}
	return false
}

// markMissingRoots sets MissingRoot on the clusters without a root sync
// when another cluster has one.
func (l *loader) markMissingRoots(clusters []*Cluster) {
	explicit := false
	for _, c := range clusters {
		if _, ok := l.roots[c.Entry]; ok {
			explicit = true
		}
	}
	for _, c := range clusters {
		if _, ok := l.roots[c.Entry]; !ok && explicit {
			c.MissingRoot = true
		}
	}
}

// repositoryDir returns the directory to load: Dir, or a copy of FS.
func repositoryDir(opts Options) (string, func(), error) {
	if opts.FS == nil {
		if opts.Dir == "" {
			return "", nil, fmt.Errorf("a repository directory is required")
		}
		abs, err := filepath.Abs(opts.Dir)
		if err != nil {
			return "", nil, err
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return "", nil, fmt.Errorf("repository %s: not a directory", opts.Dir)
		}
		return abs, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "weir-fleet-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	if err := os.CopyFS(tmp, opts.FS); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("copying the repository: %w", err)
	}
	return tmp, cleanup, nil
}

// Node returns the node of kind/namespace/name, or nil.
func (c *Cluster) Node(kind, namespace, name string) *Node {
	for _, n := range c.Nodes {
		if n == c.Root && c.MissingRoot {
			continue
		}
		if n.Object.GetKind() == kind && n.Object.GetNamespace() == namespace && n.Object.GetName() == name {
			return n
		}
	}
	return nil
}

// Kustomizations returns the Kustomization nodes.
func (c *Cluster) Kustomizations() []*Node {
	var out []*Node
	for _, n := range c.Nodes {
		if n.Kustomization != nil {
			out = append(out, n)
		}
	}
	return out
}

// AppliedKeys returns the keys of Applied, sorted.
func (c *Cluster) AppliedKeys() []string {
	keys := make([]string, 0, len(c.Applied))
	for k := range c.Applied {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ID is "Kind/namespace/name" of the node.
func (n *Node) ID() string { return Key(n.Object) }

// Key is "Kind/namespace/name" of an object ("Kind/name" when it has no
// namespace): how Applied and Sources are indexed.
func Key(o *unstructured.Unstructured) string {
	return KeyOf(o.GetKind(), o.GetNamespace(), o.GetName())
}

// KeyOf is the Key of kind, namespace and name.
func KeyOf(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// DependsOn returns spec.dependsOn of the Kustomization or HelmRelease.
func (n *Node) DependsOn() []meta.DependencyReference {
	switch {
	case n.Kustomization != nil:
		return n.Kustomization.Spec.DependsOn
	case n.HelmRelease != nil:
		return n.HelmRelease.Spec.DependsOn
	}
	return nil
}
