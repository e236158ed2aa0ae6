package fleetdiff

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// The kinds of Node.
const (
	KustomizationKind = "Kustomization"
	HelmReleaseKind   = "HelmRelease"
)

// Key names a Node on both sides.
type Key struct {
	// Cluster is the entry point the node belongs to ("clusters/dev"):
	// two clusters of a repository often hold nodes of the same name.
	Cluster   string `json:"cluster,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is "<kind>/<namespace>/<name>", after "<cluster>: " when set.
func (k Key) String() string {
	s := k.Kind + "/" + k.Namespace + "/" + k.Name
	if k.Cluster != "" {
		return k.Cluster + ": " + s
	}
	return s
}

// Node is a Kustomization or HelmRelease rendered at one revision.
type Node struct {
	Key
	// File and Line are where the object is defined, repository-relative.
	File string
	Line int
	// Prune is the Kustomization's spec.prune (a HelmRelease's upgrade
	// always deletes what leaves its manifest).
	Prune bool
	// Force is the Kustomization's spec.force: an immutable-field change
	// recreates the object instead of failing.
	Force bool
	// Parent is the node whose render holds this object; nil for an
	// entry point, which nothing in the repository applies.
	Parent *Key
	// Digest is the render's input digest: two sides with the same
	// non-empty digest render the same objects and are not compared.
	Digest string
	// Object is the Kustomization or HelmRelease itself, as its parent
	// renders it: a node that is not rendered counts as changed when it
	// changes.
	Object *unstructured.Unstructured
	// Skipped says why Objects is not the render (a HelmRelease whose
	// chart is not available offline); empty when it is.
	Skipped string
	// Objects are the rendered objects.
	Objects []*unstructured.Unstructured
	// Err is the render's failure.
	Err error
}

// Side is the fleet at one revision.
type Side struct {
	Revision string
	Nodes    []*Node
}

// Status is what became of a node between the two sides.
type Status string

// The statuses of a NodeReport.
const (
	Added     Status = "added"
	Removed   Status = "removed"
	Changed   Status = "changed"
	Unchanged Status = "unchanged"
	// Failed: the render fails at head; the objects are unknown.
	Failed Status = "failed"
	// BaseFailed: the render failed at base and works at head (a fix):
	// what the cluster holds is unknown, the diff of this node too.
	BaseFailed Status = "base-failed"
	// NotRendered: the node's objects could not be rendered offline.
	NotRendered Status = "not-rendered"
)

// ObjectChange is one object created, changed or deleted.
type ObjectChange struct {
	Object string         `json:"object"`
	Action ssa.DiffAction `json:"action"`
	// Diff is a unified diff, base first, Secret values masked.
	Diff string `json:"diff,omitempty"`

	id            ssa.ObjMetadata
	before, after *unstructured.Unstructured
}

// NodeReport is one node's changes.
type NodeReport struct {
	Key
	File    string         `json:"file,omitempty"`
	Line    int            `json:"line,omitempty"`
	Status  Status         `json:"status"`
	Error   string         `json:"error,omitempty"`
	Note    string         `json:"note,omitempty"`
	Objects []ObjectChange `json:"objects,omitempty"`
}

// Report is the comparison of two sides.
type Report struct {
	Base string `json:"base"`
	Head string `json:"head"`
	// Nodes are every node of either side but the unchanged ones, sorted
	// by key.
	Nodes   []NodeReport `json:"nodes"`
	Dangers []Danger     `json:"dangers"`
	// Compared counts the nodes compared object by object; Reused those
	// whose input digest had not changed.
	Compared int `json:"compared"`
	Reused   int `json:"reused"`
}

// HasChanges reports whether any node changed, appeared or went.
func (r *Report) HasChanges() bool {
	for _, n := range r.Nodes {
		if n.Status != Unchanged {
			return true
		}
	}
	return false
}

// HasFailures reports whether a render failed, leaving the diff
// incomplete.
func (r *Report) HasFailures() bool {
	return slices.ContainsFunc(r.Nodes, func(n NodeReport) bool { return n.Status == Failed })
}

// Compare reports what changes from base to head.
func Compare(base, head Side) (*Report, error) {
	c := newComparison(base, head)
	out := &Report{Base: base.Revision, Head: head.Revision, Dangers: []Danger{}, Nodes: []NodeReport{}}
	for _, k := range c.keys() {
		n, err := c.node(k, out)
		if err != nil {
			return nil, err
		}
		if n.Status != Unchanged {
			out.Nodes = append(out.Nodes, n)
		}
	}
	out.Dangers = append(out.Dangers, c.dangers...)
	sortDangers(out.Dangers)
	return out, nil
}

// comparison holds both sides indexed.
type comparison struct {
	base, head map[Key]*Node
	// headOwner names, for every object rendered at head, the node that
	// renders it: a deleted object may only move.
	headOwner map[placed]Key
	dangers   []Danger
	removal   map[Key]bool // memo of deletedByParent
}

func newComparison(base, head Side) *comparison {
	c := &comparison{base: index(base), head: index(head), headOwner: map[placed]Key{}, removal: map[Key]bool{}}
	for _, n := range head.Nodes {
		for _, o := range n.Objects {
			c.headOwner[placed{n.Cluster, ssa.ObjMetadataOf(o)}] = n.Key
		}
	}
	return c
}

// placed is an object in one cluster.
type placed struct {
	cluster string
	id      ssa.ObjMetadata
}

func index(s Side) map[Key]*Node {
	out := make(map[Key]*Node, len(s.Nodes))
	for _, n := range s.Nodes {
		out[n.Key] = n
	}
	return out
}

func (c *comparison) keys() []Key {
	var keys []Key
	for k := range c.base {
		keys = append(keys, k)
	}
	for k := range c.head {
		if c.base[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return keys
}

// node compares one node and records its dangers.
func (c *comparison) node(k Key, r *Report) (NodeReport, error) {
	b, h := c.base[k], c.head[k]
	out := NodeReport{Key: k}
	switch {
	case h != nil:
		out.File, out.Line = h.File, h.Line
	default:
		out.File, out.Line = b.File, b.Line
	}
	if status, bad := failure(b, h); status != "" {
		out.Status, out.Error = status, bad
		return out, nil
	}
	if skipped := cmp.Or(skippedOf(h), skippedOf(b)); skipped != "" {
		out.Status, out.Note = NotRendered, skipped
		if b != nil && h != nil && equality.Semantic.DeepEqual(b.Object, h.Object) {
			out.Status = Unchanged
		}
		return out, nil
	}
	switch {
	case b == nil:
		out.Status = Added
	case h == nil:
		out.Status = Removed
		c.removed(b)
	case b.Digest != "" && b.Digest == h.Digest:
		r.Reused++
		out.Status = Unchanged
		return out, nil
	}
	r.Compared++
	changes, err := diffObjects(objectsOf(b), objectsOf(h))
	if err != nil {
		return out, fmt.Errorf("%s: %w", k, err)
	}
	out.Objects = changes
	if out.Status == "" {
		out.Status = Changed
		if len(changes) == 0 {
			out.Status = Unchanged
		}
	}
	if b != nil && h != nil {
		c.objectDangers(h, changes)
	}
	return out, nil
}

// failure says whether either side failed to render, and how.
func failure(b, h *Node) (Status, string) {
	switch {
	case h != nil && h.Err != nil:
		return Failed, h.Err.Error()
	case b != nil && b.Err != nil && h != nil:
		// Removed, the failure no longer matters.
		return BaseFailed, "at the base revision: " + b.Err.Error()
	}
	return "", ""
}

func skippedOf(n *Node) string {
	if n == nil {
		return ""
	}
	return n.Skipped
}

func objectsOf(n *Node) []*unstructured.Unstructured {
	if n == nil || n.Err != nil {
		return nil
	}
	return n.Objects
}

// diffObjects compares two renders object by object, sorted by identity.
func diffObjects(base, head []*unstructured.Unstructured) ([]ObjectChange, error) {
	before := map[ssa.ObjMetadata]*unstructured.Unstructured{}
	var ids []ssa.ObjMetadata
	for _, o := range base {
		id := ssa.ObjMetadataOf(o)
		before[id] = o
		ids = append(ids, id)
	}
	after := map[ssa.ObjMetadata]*unstructured.Unstructured{}
	for _, o := range head {
		id := ssa.ObjMetadataOf(o)
		if before[id] == nil && after[id] == nil {
			ids = append(ids, id)
		}
		after[id] = o
	}
	slices.SortFunc(ids, func(a, b ssa.ObjMetadata) int { return cmp.Compare(a.String(), b.String()) })
	ids = slices.Compact(ids)
	var out []ObjectChange
	for _, id := range ids {
		d, err := ssa.CompareManifests(before[id], after[id], "base", "head")
		if err != nil {
			return nil, err
		}
		if d.Action == ssa.DiffUnchanged {
			continue
		}
		out = append(out, ObjectChange{Object: id.String(), Action: d.Action, Diff: d.Diff, id: id, before: before[id], after: after[id]})
	}
	return out, nil
}
