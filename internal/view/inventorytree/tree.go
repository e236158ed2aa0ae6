package inventorytree

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/object"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/view/objectstate"
)

// The kinds whose inventories are walked.
var (
	kustomizationGVK = kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind)
	helmReleaseGVK   = helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind)
)

// Node is one object of the tree and the objects it manages. Its JSON and
// YAML forms are the flux CLI's (object metadata under "resource", children
// under "resources"); Version and State are left out of them.
type Node struct {
	Resource  object.ObjMetadata `json:"resource"`
	Resources []*Node            `json:"resources,omitempty"`
	// Version is the object's API version as its inventory records it
	// ("" when unknown).
	Version string `json:"-"`
	// State is the live object's state (objectstate.Live; notfound when
	// it is gone), set when Options.States asks for it, and for the
	// objects of a Kustomization that targets another cluster left "".
	State string `json:"-"`
}

// Options configure Build.
type Options struct {
	// Compact keeps only Flux's own kinds.
	Compact bool
	// Storage lists the objects of a HelmRelease without a
	// status.inventory from Helm's storage (HelmStorage); nil leaves them
	// out.
	Storage func(ctx context.Context, hr *unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	// Consumers nests below each ExternalArtifact of an ArtifactGenerator
	// the Kustomizations and HelmReleases that read it (`tree artifact
	// generator`); without it an ExternalArtifact is a leaf.
	Consumers bool
	// States reads every node's live object to set Node.State: one GET
	// per node that is not a Kustomization or HelmRelease (those are read
	// to be walked anyway), eight at a time once the walk is done.
	States bool
}

// Build reads the Kustomization, HelmRelease or ArtifactGenerator ns/name
// (gvk) and,
// recursively, the inventories below it. A Kustomization or HelmRelease
// met a second time (a cycle) is left out; one that targets another
// cluster (spec.kubeConfig) is not walked, as its objects are not in this
// cluster.
func Build(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name string, opts Options) (*Node, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %s not found in %s namespace", gvk.Kind, name, ns)
		}
		return nil, fmt.Errorf("reading %s %s in %s namespace: %w", gvk.Kind, name, ns, err)
	}
	root := &Node{Resource: object.ObjMetadata{Namespace: ns, Name: name, GroupKind: gvk.GroupKind()}, Version: gvk.Version}
	if opts.States {
		root.State = objectstate.Live(u)
	}
	w := &walker{c: c, opts: opts, seen: map[object.ObjMetadata]bool{root.Resource: true}}
	if err := w.walk(ctx, root, u); err != nil {
		return nil, err
	}
	w.readStates(ctx)
	return root, nil
}

// stateReaders bounds the GETs Options.States runs at once.
const stateReaders = 8

type walker struct {
	c    client.Client
	opts Options
	seen map[object.ObjMetadata]bool
	// pending are the nodes whose state is read after the walk.
	pending []*Node
}

// readStates reads the state of every pending node, stateReaders at a
// time (the client's rate limiter permitting).
func (w *walker) readStates(ctx context.Context) {
	var g errgroup.Group
	g.SetLimit(stateReaders)
	for _, n := range w.pending {
		g.Go(func() error {
			n.State = w.state(ctx, n)
			return nil
		})
	}
	_ = g.Wait()
}

func (w *walker) walk(ctx context.Context, n *Node, owner *unstructured.Unstructured) error {
	remote := false
	if kc, ok, _ := unstructured.NestedMap(owner.Object, "spec", "kubeConfig"); ok && kc != nil {
		remote = true
	}
	entries, err := w.inventory(ctx, owner, remote)
	if err != nil {
		return err
	}
	for _, child := range entries {
		meta := child.Resource
		if meta == n.Resource {
			continue // a Kustomization that applies itself
		}
		if w.opts.Compact && !objectstate.IsFluxGroup(meta.GroupKind.Group) {
			continue
		}
		if w.seen[meta] {
			continue // met before: a cycle, left out as the flux CLI does
		}
		n.Resources = append(n.Resources, child)
		if remote {
			continue
		}
		if err := w.descend(ctx, child); err != nil {
			return err
		}
	}
	return nil
}

// inventory lists the objects owner manages: its status.inventory, or for
// a HelmRelease without one, what Options.Storage finds.
func (w *walker) inventory(ctx context.Context, owner *unstructured.Unstructured, remote bool) ([]*Node, error) {
	if owner.GroupVersionKind().GroupKind() == artifactGeneratorGVK.GroupKind() {
		return w.generated(ctx, owner)
	}
	entries, found, _ := unstructured.NestedSlice(owner.Object, "status", "inventory", "entries")
	if !found && !remote && w.opts.Storage != nil && owner.GroupVersionKind().GroupKind() == helmReleaseGVK.GroupKind() {
		objs, err := w.opts.Storage(ctx, owner)
		if err != nil {
			return nil, err
		}
		out := make([]*Node, 0, len(objs))
		for _, o := range objs {
			out = append(out, &Node{Resource: object.UnstructuredToObjMetadata(o), Version: o.GroupVersionKind().Version})
		}
		return out, nil
	}
	out := make([]*Node, 0, len(entries))
	for _, e := range entries {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		meta, err := object.ParseObjMetadata(id)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: inventory entry %q: %w", owner.GetKind(), owner.GetNamespace(), owner.GetName(), id, err)
		}
		v, _ := m["v"].(string)
		out = append(out, &Node{Resource: meta, Version: v})
	}
	return out, nil
}

// descend reads a Kustomization or HelmRelease child and walks it; with
// Options.States it reads any other child for its state.
func (w *walker) descend(ctx context.Context, child *Node) error {
	meta := child.Resource
	var gvk schema.GroupVersionKind
	switch meta.GroupKind {
	case kustomizationGVK.GroupKind():
		gvk = kustomizationGVK
	case helmReleaseGVK.GroupKind():
		gvk = helmReleaseGVK
	case artifactGeneratorGVK.GroupKind():
		gvk = artifactGeneratorGVK
	default:
		if w.opts.States {
			w.pending = append(w.pending, child)
		}
		return nil
	}
	w.seen[meta] = true
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			child.State = w.missing()
			return nil // listed in a stale inventory: nothing below it
		}
		return fmt.Errorf("reading %s %s/%s: %w", gvk.Kind, meta.Namespace, meta.Name, err)
	}
	if w.opts.States {
		child.State = objectstate.Live(u)
	}
	return w.walk(ctx, child, u)
}

func (w *walker) missing() string {
	if w.opts.States {
		return objectstate.NotFound
	}
	return ""
}

// state reads n's live object for its kstatus word: notfound when it (or
// its kind) is gone, unknown when it cannot be read (the caller may not).
func (w *walker) state(ctx context.Context, n *Node) string {
	gvk := n.Resource.GroupKind.WithVersion(n.Version)
	if n.Version == "" {
		m, err := w.c.RESTMapper().RESTMapping(n.Resource.GroupKind)
		if err != nil {
			return objectstate.Unknown
		}
		gvk = m.GroupVersionKind
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := w.c.Get(ctx, client.ObjectKey{Namespace: n.Resource.Namespace, Name: n.Resource.Name}, u)
	switch {
	case apierrors.IsNotFound(err), apimeta.IsNoMatchError(err):
		return objectstate.NotFound
	case err != nil:
		return objectstate.Unknown
	}
	return objectstate.Live(u)
}

// Text is how a node names its object: Kind/namespace/name, or Kind/name
// for cluster-scoped objects.
func (n *Node) Text() string {
	if n.Resource.Namespace == "" {
		return n.Resource.GroupKind.Kind + "/" + n.Resource.Name
	}
	return n.Resource.GroupKind.Kind + "/" + n.Resource.Namespace + "/" + n.Resource.Name
}

// Tree glyphs, as the flux CLI draws them.
const (
	branch     = "├── "
	lastBranch = "└── "
	pipe       = "│   "
	blank      = "    "
)

// String draws the tree: the root, then each child on its own line below
// its parent, indented by the glyphs of the levels above.
func (n *Node) String() string {
	var b strings.Builder
	b.WriteString(n.Text() + "\n")
	n.drawChildren(&b, "")
	return b.String()
}

func (n *Node) drawChildren(b *strings.Builder, prefix string) {
	for i, c := range n.Resources {
		last := i == len(n.Resources)-1
		glyph, next := branch, pipe
		if last {
			glyph, next = lastBranch, blank
		}
		b.WriteString(prefix + glyph + c.Text() + "\n")
		c.drawChildren(b, prefix+next)
	}
}

// Write prints the tree as text (format ""), json or yaml, each followed by
// an empty line as the flux CLI prints it.
func (n *Node) Write(w io.Writer, format string) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = json.MarshalIndent(n, "", "  ")
		data = append(data, '\n')
	case "yaml":
		data, err = yaml.Marshal(n)
	default:
		data = []byte(n.String())
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
