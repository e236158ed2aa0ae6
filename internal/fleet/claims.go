package fleet

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/weir-gitops/weir/internal/kustomize/render"
)

// childClaims returns, repository-relative, what the Kustomizations
// written inside the entry point sync themselves there: the paths of those
// whose spec.path lies below the entry and whose source is the root's,
// and the files and kustomization directories their builds read. The
// implicit root leaves them out of its generated kustomization
// (render.Options.Exclude), so that it does not claim its children's
// objects.
//
// kustomize-controller's generator lists every YAML file below the path,
// children's directories included, so a root the repository holds is
// built as Flux builds it and a child inside it is reported as applying
// its objects twice. The implicit root is the loader's assumption; an
// entry directory holding both the Kustomizations and what they sync
// says that these Kustomizations are the cluster, and the root assumed
// is the one that applies them and nothing that is theirs.
//
// A Kustomization written inside another one's path is that one's to
// apply: it is counted only once the path holding it is claimed, so the
// root keeps every file through which the others are found. One written
// as the root itself (flux-system/flux-system) is the root, not a child.
// An entry directory with a kustomization file of its own is built as
// that file says: nothing is left out.
func (cl *clusterLoad) childClaims(ctx context.Context) []string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if fi, err := os.Stat(filepath.Join(cl.abs(cl.c.Entry), name)); err == nil && !fi.IsDir() {
			return nil
		}
	}
	cands := cl.writtenChildren()
	insideAny := func(file string, paths []string) bool {
		return slices.ContainsFunc(paths, func(p string) bool { return within(file, p) })
	}
	var claimed []*Node
	var paths []string
	for _, c := range cands {
		var others []string
		for _, o := range cands {
			if o.node != c.node {
				others = append(others, o.path)
			}
		}
		if !insideAny(c.node.File, others) {
			claimed, paths = append(claimed, c.node), append(paths, c.path)
		}
	}
	for grew := true; grew; {
		grew = false
		for _, c := range cands {
			if !slices.Contains(claimed, c.node) && insideAny(c.node.File, paths) {
				claimed, paths, grew = append(claimed, c.node), append(paths, c.path), true
			}
		}
	}
	for _, n := range claimed {
		paths = append(paths, cl.reads(ctx, n)...)
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// writtenChild is a Kustomization written inside the entry point, with
// its spec.path (repository-relative) below the entry.
type writtenChild struct {
	node *Node
	path string
}

// writtenChildren returns the Kustomizations written inside the entry
// point, in walk order, that read the root's source and sync a directory
// below the entry; the root itself, written there, is not one.
func (cl *clusterLoad) writtenChildren() []writtenChild {
	entry := cl.c.Entry
	var out []writtenChild
	for _, w := range cl.written {
		if !within(w.file, entry) || w.doc.name == implicitName && (w.doc.namespace == "" || w.doc.namespace == implicitNamespace) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := cl.decodeNode(w.doc.node, u); err != nil {
			continue
		}
		n, err := NewNode(u, Position{File: w.file, Line: w.doc.line}, nil)
		if err != nil || !cl.rootSourced(n) {
			continue
		}
		if p := cleanRel(n.Kustomization.Spec.Path); p != entry && within(p, entry) {
			out = append(out, writtenChild{node: n, path: p})
		}
	}
	return out
}

// reads lists what n's build reads, as claims: each file, but a
// kustomization file's directory, which a generated kustomization lists
// as one entry. The build is offline and lenient (no substituteFrom,
// undefined variables allowed, SOPS content left as it is, no remote
// base): which files a build reads does not depend on its variables. A
// build that fails claims nothing beyond the path; the child's own build
// reports why.
func (cl *clusterLoad) reads(ctx context.Context, n *Node) []string {
	res, err := render.Kustomization(ctx, nil, n.Kustomization, cl.dir,
		render.Options{Offline: true, NoRemoteBases: true, AllowUndefinedVariables: true, SkipChecksum: true})
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(res.Files))
	for _, f := range res.Files {
		if slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(f)) {
			f = path.Dir(f)
		}
		out = append(out, f)
	}
	return out
}

// rootSourced reports whether n, as written, reads the root's source. Its
// namespace may be left to a kustomization the root builds, so a written
// Kustomization without one reads the root's source by its name.
func (cl *clusterLoad) rootSourced(n *Node) bool {
	if n.Source == cl.rootSource {
		return true
	}
	ref := n.Kustomization.Spec.SourceRef
	src := cl.c.Sources[cl.rootSource].Object
	return n.Object.GetNamespace() == "" && ref.Namespace == "" && ref.Kind == src.GetKind() && ref.Name == src.GetName()
}
