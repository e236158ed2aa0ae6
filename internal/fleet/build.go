package fleet

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/render"
)

// originAnnotation is where kustomize records the file an object came from
// when buildMetadata holds originAnnotations.
const originAnnotation = "config.kubernetes.io/origin"

// origin is the part of kustomize's origin annotation the loader reads.
type origin struct {
	Path         string `json:"path"`
	Repo         string `json:"repo"`
	ConfiguredIn string `json:"configuredIn"`
}

// build renders a Kustomization node whose source is local (SourceDir)
// with the controller's code; the implicit root without what its
// children sync inside the entry point (childClaims).
// It writes only to n: builds of one batch run concurrently (the graph
// they read does not change until the batch is registered).
func (cl *clusterLoad) build(ctx context.Context, n *Node) {
	dir := n.SourceDir
	n.Built = true
	ks := n.Kustomization.DeepCopy()
	ownOrigins := slices.Contains(ks.Spec.BuildMetadata, kustomizev1.OriginAnnotations)
	if !ownOrigins {
		ks.Spec.BuildMetadata = append(ks.Spec.BuildMetadata, kustomizev1.OriginAnnotations)
	}
	reader := &graphReader{cluster: cl.c, keys: cl.opts.DecryptKeys}
	if d := ks.Spec.Decryption; d != nil && d.SecretRef != nil {
		reader.decryptionSecret = d.SecretRef.Name
	}
	if ks.Spec.PostBuild != nil {
		n.Vars, _ = render.Variables(ctx, reader, ks)
	}
	opts := render.Options{NoRemoteBases: cl.opts.NoRemoteBases, KeepEncrypted: len(cl.opts.DecryptKeys) == 0, SkipChecksum: true}
	var digestSpec any = n.Kustomization.Spec
	if n.Implicit {
		if opts.Exclude = cl.childClaims(ctx); len(opts.Exclude) > 0 {
			digestSpec = struct {
				Spec    kustomizev1.KustomizationSpec
				Exclude []string
			}{n.Kustomization.Spec, opts.Exclude}
		}
	}
	res, err := render.Kustomization(ctx, reader, ks, dir, opts)
	if errors.Is(err, kustomize.ErrVariableNotSet) {
		// The cluster stops here; the analysis goes on with what a
		// lenient build yields, so the graph below is still seen.
		opts.AllowUndefinedVariables = true
		res, _ = render.Kustomization(ctx, reader, ks, dir, opts)
	}
	n.Err = err
	prefix := cl.relPrefix(dir)
	var files []string
	if res == nil {
		files = filesUnder(dir, cleanRel(ks.Spec.Path))
	} else {
		files = res.Files
		n.Objects = res.Objects
		n.Origins = cl.origins(n, res.Objects, dir, prefix, !ownOrigins)
	}
	n.InputDigest = inputDigest(dir, files, digestSpec, n.Vars)
	for _, f := range files {
		n.Files = append(n.Files, path.Join(prefix, f))
	}
}

// sourceDir is the directory standing for the artifact of the source key
// names: this repository for the root's source and for a GitRepository
// whose URL is one of the repository's, the directory Options.Sources
// gives, else "" (not local).
func (cl *clusterLoad) sourceDir(key string) string {
	src := cl.c.Sources[key]
	if src == nil {
		return ""
	}
	if src.Dir != "" {
		return src.Dir
	}
	ns, name := src.Object.GetNamespace(), src.Object.GetName()
	for _, k := range []string{ns + "/" + name, name} {
		if d, ok := cl.opts.Sources[k]; ok {
			abs, err := filepath.Abs(d)
			if err == nil {
				src.Dir = abs
			}
			return src.Dir
		}
	}
	if src.Object.GetKind() == "GitRepository" && src.URL != "" && cl.urls[normalizeURL(src.URL)] {
		src.Dir = cl.dir
	}
	return src.Dir
}

// relPrefix is how positions inside dir are written: relative to the
// repository, or as given when dir lies outside it.
func (l *loader) relPrefix(dir string) string {
	if key, ok := l.labels[dir]; ok {
		return key
	}
	rel, err := filepath.Rel(l.dir, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(dir)
	}
	return filepath.ToSlash(rel)
}

// origins reads the position of each built object from kustomize's origin
// annotation, and drops the annotation when the loader asked for it.
func (cl *clusterLoad) origins(n *Node, objects []*unstructured.Unstructured, dir, prefix string, strip bool) []Position {
	base := cleanRel(n.Kustomization.Spec.Path)
	out := make([]Position, len(objects))
	for i, o := range objects {
		ann := o.GetAnnotations()
		var org origin
		_ = yaml.Unmarshal([]byte(ann[originAnnotation]), &org)
		if strip {
			delete(ann, originAnnotation)
			if len(ann) == 0 {
				ann = nil
			}
			o.SetAnnotations(ann)
		}
		switch {
		case org.Repo != "":
			out[i] = Position{File: org.Repo + "//" + org.Path}
		case org.Path != "":
			file := path.Join(base, org.Path)
			out[i] = Position{File: path.Join(prefix, file),
				Line: lineOf(cl.docs.of(filepath.Join(dir, filepath.FromSlash(file))), o.GetKind(), o.GetName())}
		case org.ConfiguredIn != "":
			out[i] = Position{File: path.Join(prefix, base, org.ConfiguredIn)}
		default:
			out[i] = Position{File: path.Join(prefix, base)}
		}
	}
	return out
}

// register records an object n applies and follows the Flux objects.
func (cl *clusterLoad) register(ctx context.Context, n *Node, o *unstructured.Unstructured, pos Position) {
	key := Key(o)
	cl.c.Applied[key] = append(cl.c.Applied[key], n)
	if cl.c.objects[key] == nil {
		cl.c.objects[key] = o
	}
	group := o.GroupVersionKind().Group
	switch {
	case group == sourceGroup:
		cl.addSource(o, pos)
	case group == extensionsGroup && o.GetKind() == sourceextensionsv1beta1.ArtifactGeneratorKind:
		cl.addGenerator(ctx, o, pos)
	case group == kustomizeGroup && o.GetKind() == kustomizev1.KustomizationKind,
		group == helmGroup && o.GetKind() == "HelmRelease":
		cl.addNode(n, o, pos)
	}
}

// addSource records a source object, replacing an implicit one.
func (cl *clusterLoad) addSource(o *unstructured.Unstructured, pos Position) {
	key := Key(o)
	url, _, _ := unstructured.NestedString(o.Object, "spec", "url")
	prev := cl.c.Sources[key]
	if prev != nil && !prev.Implicit {
		return
	}
	src := &Source{Object: o, Position: pos, URL: url}
	if prev != nil {
		src.Dir = prev.Dir
	}
	cl.c.Sources[key] = src
}

// addNode records a Kustomization or HelmRelease the graph yields. The
// root yielding itself updates the root; a second definition of a node is
// left to the duplicate-object analysis.
func (cl *clusterLoad) addNode(parent *Node, o *unstructured.Unstructured, pos Position) {
	key := Key(o)
	if root := cl.c.Root; root.ID() == key {
		if fresh, err := NewNode(o, pos, nil); err == nil {
			root.Object, root.Kustomization, root.Position, root.Implicit = o, fresh.Kustomization, pos, false
		}
		return
	}
	for _, existing := range cl.c.Nodes {
		if existing.ID() == key {
			return
		}
	}
	node, err := NewNode(o, pos, parent)
	if err != nil {
		cl.c.Nodes = append(cl.c.Nodes, &Node{Object: o, Position: pos, Parent: parent, Err: err})
		return
	}
	cl.add(node)
}
