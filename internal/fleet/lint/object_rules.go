package lint

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/config/crd"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/fleet"
)

// origin returns the position of the object key among what n applies.
func origin(n *fleet.Node, key string) fleet.Position {
	for i, o := range n.Objects {
		if fleet.Key(o) == key {
			return n.Origins[i]
		}
	}
	return n.Position
}

// closure is the set of node IDs n depends on, directly or not.
func closure(c *fleet.Cluster, n *fleet.Node) map[string]bool {
	seen := map[string]bool{}
	stack := []*fleet.Node{n}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur.Kustomization == nil {
			continue
		}
		for _, ref := range cur.Kustomization.Spec.DependsOn {
			key := dependency.Key(cur.Object.GetNamespace(), ref)
			dep := c.Node(cur.Object.GetKind(), key.Namespace, key.Name)
			if dep == nil || seen[dep.ID()] {
				continue
			}
			seen[dep.ID()] = true
			stack = append(stack, dep)
		}
	}
	return seen
}

func substitutionRace(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range c.Kustomizations() {
		pb := n.Kustomization.Spec.PostBuild
		if pb == nil {
			continue
		}
		ordered := closure(c, n)
		for _, ref := range pb.SubstituteFrom {
			key := fleet.KeyOf(ref.Kind, n.Object.GetNamespace(), ref.Name)
			for _, a := range distinct(c.Applied[key]) {
				if a == n || ordered[a.ID()] || (a == c.Root && c.MissingRoot) {
					continue // an unsynced root is missing-entry-point's
				}
				out = append(out, at(n, fmt.Sprintf(
					"substitutes from %s, which %s applies (%s), but is not ordered after it through dependsOn: a change to %s can be built with its old values; add dependsOn on %s or on a Kustomization that depends on it",
					key, a.ID(), where(origin(a, key)), ref.Name, a.Object.GetName())))
			}
		}
	}
	return out
}

// distinct drops repeated nodes, keeping the order.
func distinct(nodes []*fleet.Node) []*fleet.Node {
	var out []*fleet.Node
	for _, n := range nodes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// toolkitControllers are the Deployments of weir's and Flux's controllers.
var toolkitControllers = map[string]bool{
	"source-controller": true, "kustomize-controller": true, "helm-controller": true, "notification-controller": true,
	"image-reflector-controller": true, "image-automation-controller": true, "source-watcher": true, "weir-controller": true,
}

// toolkitObject reports whether o is part of the toolkit itself: the
// flux-system namespace, a toolkit CRD, or a controller Deployment.
func toolkitObject(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case "Namespace":
		return o.GetName() == "flux-system"
	case "CustomResourceDefinition":
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		return strings.HasSuffix(group, ".toolkit.fluxcd.io") || strings.HasSuffix(o.GetName(), ".toolkit.fluxcd.io")
	case "Deployment":
		partOf := o.GetLabels()["app.kubernetes.io/part-of"]
		return toolkitControllers[o.GetName()] && (partOf == "flux" || partOf == "weir" || o.GetNamespace() == "flux-system")
	}
	return false
}

func pruneControllers(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range c.Kustomizations() {
		if n == c.Root || !n.Kustomization.Spec.Prune {
			continue
		}
		var hits []string
		var first fleet.Position
		for i, o := range n.Objects {
			if toolkitObject(o) {
				if hits == nil {
					first = n.Origins[i]
				}
				hits = append(hits, fleet.Key(o))
			}
		}
		if len(hits) == 0 {
			continue
		}
		shown := hits
		if len(shown) > 3 {
			shown = append(slices.Clone(hits[:3]), fmt.Sprintf("and %d more", len(hits)-3))
		}
		f := at(n, fmt.Sprintf("prune: true and applies the toolkit itself (%s): deleting this Kustomization or moving the files deletes the controllers that would undo it; only the root sync should hold them",
			strings.Join(shown, ", ")))
		f.File, f.Line = first.File, first.Line
		out = append(out, f)
	}
	return out
}

func duplicateObject(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, key := range c.AppliedKeys() {
		nodes := distinct(c.Applied[key])
		for _, other := range nodes[1:] {
			p := origin(other, key)
			out = append(out, Finding{Object: key, File: p.File, Line: p.Line, Message: fmt.Sprintf(
				"applied by both %s (%s) and %s: they overwrite each other, and pruning either one deletes it from under the other",
				nodes[0].ID(), where(origin(nodes[0], key)), other.ID())})
		}
	}
	return out
}

// servedVersions maps group/kind of every toolkit CRD to the versions it
// serves: weir's CRDs, which serve exactly what Flux 2.9's do.
var servedVersions = sync.OnceValues(func() (map[string][]string, error) {
	crds, err := crd.Load(crd.Options{})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, d := range crds {
		for _, v := range d.Spec.Versions {
			if v.Served {
				key := d.Spec.Group + "/" + d.Spec.Names.Kind
				out[key] = append(out[key], v.Name)
			}
		}
	}
	return out, nil
})

func removedAPI(c *fleet.Cluster, _ Options) []Finding {
	served, err := servedVersions()
	if err != nil {
		return []Finding{{File: c.Entry, Message: "reading the served API versions: " + err.Error()}}
	}
	var out []Finding
	for _, key := range c.AppliedKeys() {
		n := c.Applied[key][0]
		var obj *unstructured.Unstructured
		for _, o := range n.Objects {
			if fleet.Key(o) == key {
				obj = o
				break
			}
		}
		gvk := obj.GroupVersionKind()
		versions, known := served[gvk.Group+"/"+gvk.Kind]
		if !known || slices.Contains(versions, gvk.Version) {
			continue
		}
		p := origin(n, key)
		out = append(out, Finding{Object: key, File: p.File, Line: p.Line, Message: fmt.Sprintf(
			"apiVersion %s is not served by Flux 2.9 (served: %s): the API server refuses the object; move it to %s/%s",
			obj.GetAPIVersion(), strings.Join(versions, ", "), gvk.Group, versions[0])})
	}
	return out
}
