package fleetdiff

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// The danger rule ids; stable, for tools reading the JSON.
const (
	RulePruneDelete      = "prune-delete"
	RuleNamespaceDelete  = "namespace-delete"
	RuleCRDDelete        = "crd-delete"
	RuleImmutableField   = "immutable-field"
	RuleRemovedWithPrune = "removed-with-prune"
)

// Danger is a consequence of the change beyond objects updated in place.
type Danger struct {
	Rule string `json:"rule"`
	// Node is the Kustomization or HelmRelease that acts.
	Node Key `json:"node"`
	// Object is the object affected; empty when it is the node itself.
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
}

func sortDangers(ds []Danger) {
	slices.SortStableFunc(ds, func(a, b Danger) int {
		return cmp.Or(cmp.Compare(a.Node.String(), b.Node.String()), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Rule, b.Rule))
	})
}

// deletes reports whether n deletes what leaves its render.
func deletes(n *Node) bool { return n.Kind == HelmReleaseKind || n.Prune }

// objectDangers judges the object changes of a node present on both
// sides.
func (c *comparison) objectDangers(n *Node, changes []ObjectChange) {
	for _, ch := range changes {
		switch ch.Action {
		case ssa.DiffDeleted:
			if d, ok := c.deleted(n, ch); ok {
				c.dangers = append(c.dangers, d)
			}
		case ssa.DiffChanged:
			if fields := immutableChanges(ch.before, ch.after); len(fields) > 0 {
				c.dangers = append(c.dangers, recreate(n, ch, fields))
			}
		}
	}
}

// deleted judges an object gone from n's render.
func (c *comparison) deleted(n *Node, ch ObjectChange) (Danger, bool) {
	if !deletes(n) || ssa.KeptByPrune(ch.before) {
		return Danger{}, false
	}
	d := Danger{Rule: RulePruneDelete, Node: n.Key, Object: ch.Object, Message: "deleted by prune"}
	if n.Kind == HelmReleaseKind {
		d.Message = "deleted by the Helm upgrade"
	}
	switch ch.id.GroupKind.String() {
	case "Namespace":
		d.Rule, d.Message = RuleNamespaceDelete, d.Message+", with every object in the namespace"
	case "CustomResourceDefinition.apiextensions.k8s.io":
		d.Rule, d.Message = RuleCRDDelete, d.Message+", with every custom resource of its kind"
	}
	if to, ok := c.headOwner[placed{n.Cluster, ch.id}]; ok {
		d.Message += fmt.Sprintf("; %s applies it at head: it survives only if that applies first "+
			"(prune skips objects another owner has labelled), else it is deleted and recreated", to)
	}
	return d, true
}

func recreate(n *Node, ch ObjectChange, fields []string) Danger {
	d := Danger{Rule: RuleImmutableField, Node: n.Key, Object: ch.Object}
	what := strings.Join(fields, ", ") + " cannot change in place"
	switch {
	case n.Kind == HelmReleaseKind:
		// Helm's force replaces (PUT), which the same validation refuses.
		d.Message = what + ": the Helm upgrade fails"
	case n.Force || ssa.ForceAnnotated(ch.before) || ssa.ForceAnnotated(ch.after):
		d.Message = what + ": the object is deleted and recreated (force)"
	default:
		d.Message = what + ": the apply fails unless spec.force is true or the object is annotated kustomize.toolkit.fluxcd.io/force: Enabled (which deletes and recreates it)"
	}
	return d
}

// removed records the dangers of a node gone at head: when its parent's
// prune deletes it, a prune: true Kustomization's finalizer deletes what
// it applied and a HelmRelease is uninstalled.
func (c *comparison) removed(b *Node) {
	if !c.deletedByParent(b.Key) || !deletes(b) {
		return
	}
	moved := 0
	for _, o := range b.Objects {
		if _, ok := c.headOwner[placed{b.Cluster, ssa.ObjMetadataOf(o)}]; ok {
			moved++
		}
	}
	d := Danger{Rule: RuleRemovedWithPrune, Node: b.Key}
	switch b.Kind {
	case HelmReleaseKind:
		d.Message = fmt.Sprintf("removed: the release is uninstalled, deleting its %d objects", len(b.Objects))
	default:
		d.Message = fmt.Sprintf("removed with prune: true: its finalizer deletes the %d objects it applied", len(b.Objects))
	}
	if moved > 0 {
		d.Message += fmt.Sprintf(" (%d of them are applied by another node at head)", moved)
	}
	c.dangers = append(c.dangers, d)
	for _, o := range b.Objects {
		if ch := (ObjectChange{Object: ssa.ObjMetadataOf(o).String(), id: ssa.ObjMetadataOf(o), before: o}); isNamespaceOrCRD(ch.id) {
			if d, ok := c.deleted(b, ch); ok {
				d.Message = strings.Replace(d.Message, "deleted by prune", "deleted by its finalizer", 1)
				c.dangers = append(c.dangers, d)
			}
		}
	}
}

func isNamespaceOrCRD(id ssa.ObjMetadata) bool {
	gk := id.GroupKind.String()
	return gk == "Namespace" || gk == "CustomResourceDefinition.apiextensions.k8s.io"
}

// deletedByParent reports whether the node k, gone at head, is deleted
// from the cluster: its parent renders at head without it and prunes, or
// is itself deleted so.
func (c *comparison) deletedByParent(k Key) bool {
	if v, ok := c.removal[k]; ok {
		return v
	}
	c.removal[k] = false // a cycle deletes nothing
	b := c.base[k]
	var v bool
	switch {
	case b == nil || b.Parent == nil:
	case c.head[*b.Parent] != nil:
		p := c.head[*b.Parent]
		v = p.Err == nil && p.Skipped == "" && deletes(p) && !keptObject(c.base[*b.Parent], k)
	default:
		p := c.base[*b.Parent]
		v = p != nil && deletes(p) && c.deletedByParent(*b.Parent)
	}
	c.removal[k] = v
	return v
}

// keptObject reports whether parent's base render holds the node k's
// object with metadata that keeps prune from deleting it.
func keptObject(parent *Node, k Key) bool {
	if parent == nil {
		return false
	}
	for _, o := range parent.Objects {
		if o.GetKind() == k.Kind && o.GetNamespace() == k.Namespace && o.GetName() == k.Name {
			return ssa.KeptByPrune(o)
		}
	}
	return false
}
