package treecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/cli-utils/pkg/object"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kinds"
)

// fluxGroupSuffix marks the API groups --compact keeps.
const fluxGroupSuffix = "toolkit.fluxcd.io"

// NewCommand returns `weir tree`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Print the resources reconciled by Flux",
		Long:  "The tree sub-commands print the inventory of Flux resources as a tree.",
	}
	ks := subcommand(streams, deps, kinds.Kustomization)
	ks.Use, ks.Aliases = "kustomization [name]", []string{"ks"}
	ks.Short = "Print the resource inventory of a Kustomization"
	ks.Long = "The tree command prints the resource list reconciled by a Kustomization, nested Kustomizations included."
	ks.Example = "  # Print the objects the root Kustomization manages\n  weir tree kustomization flux-system\n\n" +
		"  # Print only the Flux objects\n  weir tree kustomization flux-system --compact"
	hr := subcommand(streams, deps, kinds.HelmRelease)
	hr.Use, hr.Aliases = "helmrelease [name]", []string{"hr"}
	hr.Short = "Print the resource inventory of a HelmRelease"
	hr.Long = `The tree command prints the objects of a HelmRelease's release, from its
status.inventory or, when it has none (a controller that does not write it),
from the manifest of the latest release in Helm's storage; Kustomizations and
HelmReleases the chart creates are nested below them.`
	hr.Example = "  # Print the objects of a release\n  weir tree helmrelease podinfo -n apps"
	cmd.AddCommand(ks, hr)
	return cmd
}

// subcommand is `weir tree <kind> NAME` for a kind with an inventory.
func subcommand(streams genericiooptions.IOStreams, deps *clideps.Deps, k kinds.Kind) *cobra.Command {
	var compact bool
	var format string
	cmd := &cobra.Command{
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: kinds.CompleteNames(deps, k),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("%s name is required", strings.ToLower(k.Kind))
			}
			switch format {
			case "", "json", "yaml":
			default:
				return fmt.Errorf("unknown output format %q: use json or yaml", format)
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			cl, err := deps.Client()
			if err != nil {
				return err
			}
			cfg, err := deps.Kube.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("loading kubeconfig: %w", err)
			}
			t, err := Build(ctx, cl, k, deps.Namespace(), args[0], Options{Compact: compact, Storage: HelmStorage(cfg, cl)})
			if err != nil {
				return err
			}
			return t.Write(streams.Out, format)
		},
	}
	cmd.Flags().BoolVar(&compact, "compact", false, "list Flux resources only")
	cmd.Flags().StringVarP(&format, "output", "o", "", "print the tree as json or yaml")
	return cmd
}

// Node is one object of the tree and the objects it manages. Its JSON and
// YAML forms are the flux CLI's (object metadata under "resource", children
// under "resources").
type Node struct {
	Resource  object.ObjMetadata `json:"resource"`
	Resources []*Node            `json:"resources,omitempty"`
}

// Options configure Build.
type Options struct {
	// Compact keeps only Flux's own kinds.
	Compact bool
	// Storage lists the objects of a HelmRelease without a
	// status.inventory from Helm's storage; nil leaves them out.
	Storage func(ctx context.Context, hr *unstructured.Unstructured) ([]object.ObjMetadata, error)
}

// Build reads the Kustomization or HelmRelease ns/name and, recursively,
// the inventories below it. A Kustomization or HelmRelease met a second
// time (a cycle) is left out; one that targets another cluster
// (spec.kubeConfig) is not walked, as its objects are not in this cluster.
func Build(ctx context.Context, c client.Client, k kinds.Kind, ns, name string, opts Options) (*Node, error) {
	u := k.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %s not found in %s namespace", k.Kind, name, ns)
		}
		return nil, fmt.Errorf("reading %s %s in %s namespace: %w", k.Kind, name, ns, err)
	}
	root := &Node{Resource: metadataOf(k, ns, name)}
	w := &walker{c: c, opts: opts, seen: map[object.ObjMetadata]bool{root.Resource: true}}
	if err := w.walk(ctx, root, u); err != nil {
		return nil, err
	}
	return root, nil
}

func metadataOf(k kinds.Kind, ns, name string) object.ObjMetadata {
	return object.ObjMetadata{Namespace: ns, Name: name, GroupKind: schema.GroupKind{Group: k.GroupVersion.Group, Kind: k.Kind}}
}

type walker struct {
	c    client.Client
	opts Options
	seen map[object.ObjMetadata]bool
}

func (w *walker) walk(ctx context.Context, n *Node, owner *unstructured.Unstructured) error {
	remote := false
	if kc, ok, _ := unstructured.NestedMap(owner.Object, "spec", "kubeConfig"); ok && kc != nil {
		remote = true
	}
	ids, err := w.inventory(ctx, owner, remote)
	if err != nil {
		return err
	}
	for _, meta := range ids {
		if meta == n.Resource {
			continue // a Kustomization that applies itself
		}
		if w.opts.Compact && !strings.HasSuffix(meta.GroupKind.Group, fluxGroupSuffix) {
			continue
		}
		if w.seen[meta] {
			continue // met before: a cycle, left out as the flux CLI does
		}
		child := &Node{Resource: meta}
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
func (w *walker) inventory(ctx context.Context, owner *unstructured.Unstructured, remote bool) ([]object.ObjMetadata, error) {
	entries, found, _ := unstructured.NestedSlice(owner.Object, "status", "inventory", "entries")
	if !found && !remote && w.opts.Storage != nil && owner.GroupVersionKind().GroupKind() == kinds.HelmRelease.GVK().GroupKind() {
		return w.opts.Storage(ctx, owner)
	}
	out := make([]object.ObjMetadata, 0, len(entries))
	for _, e := range entries {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		meta, err := object.ParseObjMetadata(id)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: inventory entry %q: %w", owner.GetKind(), owner.GetNamespace(), owner.GetName(), id, err)
		}
		out = append(out, meta)
	}
	return out, nil
}

// descend reads a Kustomization or HelmRelease child and walks it.
func (w *walker) descend(ctx context.Context, child *Node) error {
	meta := child.Resource
	var k kinds.Kind
	switch meta.GroupKind {
	case kinds.Kustomization.GVK().GroupKind():
		k = kinds.Kustomization
	case kinds.HelmRelease.GVK().GroupKind():
		k = kinds.HelmRelease
	default:
		return nil
	}
	w.seen[meta] = true
	u := k.New()
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // listed in a stale inventory: nothing below it
		}
		return fmt.Errorf("reading %s %s/%s: %w", k.Kind, meta.Namespace, meta.Name, err)
	}
	return w.walk(ctx, child, u)
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
