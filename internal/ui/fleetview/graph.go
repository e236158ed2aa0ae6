package fleetview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/view/kinds"
)

// Edge types.
const (
	EdgeSource    = "source"
	EdgeDependsOn = "dependsOn"
	// EdgeApplies runs from a Kustomization to a toolkit object it applied
	// (a HelmRelease, a Kustomization, a source), as the applied object's
	// kustomize.toolkit.fluxcd.io/name and /namespace labels say.
	EdgeApplies = "applies"
)

// Node is one object of the graph.
type Node struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	State     string `json:"state"`
	Revision  string `json:"revision"`
	// Layer is the longest path from a node without incoming edges.
	Layer int `json:"layer"`
	// Order is the node's place within its layer, left to right.
	Order int `json:"order"`
	// Waiting says what holds the node back: a dependency not ready at
	// the revision needed, or a source without an artifact.
	Waiting string `json:"waiting,omitempty"`
}

// Edge points from what is needed to what needs it.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Type string `json:"type"`
}

// Graph is the graph page.
type Graph struct {
	Nodes   []Node            `json:"nodes"`
	Edges   []Edge            `json:"edges"`
	Skipped map[string]string `json:"skipped,omitempty"`
	// Hidden are the kinds the user may not list (Fleet.Forbidden).
	Hidden []string `json:"hidden,omitempty"`
}

// inGraph reports whether objects of kind are drawn: sources (an
// ExternalArtifact among them), ArtifactGenerators, Kustomizations and
// HelmReleases.
func inGraph(kind string) bool {
	k, ok := kinds.ByKind(kind)
	return ok && (k.Source || k.Kind == kinds.ArtifactGenerator.Kind ||
		k.Kind == kinds.Kustomization.Kind || k.Kind == kinds.HelmRelease.Kind)
}

// index finds objects by Ref.ID.
type index map[string]*unstructured.Unstructured

func newIndex(objs []unstructured.Unstructured) index {
	idx := make(index, len(objs))
	for i := range objs {
		u := &objs[i]
		idx[refOf(u).String()] = u
	}
	return idx
}

// NewGraph computes the graph of the objects f selects; waiting is judged
// against every object, selected or not.
func NewGraph(objs []unstructured.Unstructured, f Filter) Graph {
	idx := newIndex(objs)
	g := Graph{Nodes: []Node{}, Edges: []Edge{}}
	selected := map[string]bool{}
	for i := range objs {
		u := &objs[i]
		s := Summarize(u)
		if !inGraph(s.Kind) || !f.Matches(s) {
			continue
		}
		id := summaryRef(s).String()
		selected[id] = true
		g.Nodes = append(g.Nodes, Node{ID: id, Kind: s.Kind, Namespace: s.Namespace, Name: s.Name,
			State: s.State, Revision: s.Revision, Waiting: idx.waiting(u)})
	}
	for _, n := range g.Nodes {
		u := idx[n.ID]
		for _, e := range idx.edgesTo(u) {
			if selected[e.From] {
				g.Edges = append(g.Edges, e)
			}
		}
	}
	layout(g.Nodes, g.Edges)
	slices.SortFunc(g.Nodes, func(a, b Node) int { return cmp.Or(cmp.Compare(a.Layer, b.Layer), cmp.Compare(a.Order, b.Order)) })
	return g
}

// source is the object u reads directly: a Kustomization's sourceRef, a
// HelmRelease's chartRef, or the HelmChart made from its chart template
// when that exists (else the template's source); a HelmChart's sourceRef.
// ok is false for kinds that read from no other object.
func (idx index) source(u *unstructured.Unstructured) (Ref, bool) {
	switch u.GetKind() {
	case kinds.Kustomization.Kind, kinds.HelmRelease.Kind, kinds.HelmChart.Kind:
	default:
		return Ref{}, false
	}
	if u.GetKind() == kinds.HelmChart.Kind {
		k, ns, name, err := kinds.SourceRef(u)
		return Ref{Kind: k.Kind, Namespace: ns, Name: name}, err == nil
	}
	srcs, err := kinds.SourcesOf(u)
	if err != nil || len(srcs) == 0 {
		return Ref{}, false
	}
	s := srcs[0]
	if len(srcs) > 1 {
		chart := srcs[len(srcs)-1]
		if r := (Ref{Kind: chart.Kind.Kind, Namespace: chart.Namespace, Name: chart.Name}); idx[r.String()] != nil {
			return r, true
		}
	}
	return Ref{Kind: s.Kind.Kind, Namespace: s.Namespace, Name: s.Name}, true
}

// dependsOn lists the objects of u's spec.dependsOn (same kind as u).
func dependsOn(u *unstructured.Unstructured) []Ref {
	raw, _, _ := unstructured.NestedSlice(u.Object, "spec", "dependsOn")
	var refs []Ref
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = u.GetNamespace()
		}
		if name != "" {
			refs = append(refs, Ref{Kind: u.GetKind(), Namespace: ns, Name: name})
		}
	}
	return refs
}

// generatorSources lists what an ArtifactGenerator reads (spec.sources,
// in its namespace unless an entry names another) or, for an
// ExternalArtifact, what produced it (spec.sourceRef, its generator).
// Both are source edges: the artifact flows along them.
func generatorSources(u *unstructured.Unstructured) []Ref {
	switch u.GetKind() {
	case kinds.ArtifactGenerator.Kind:
		raw, _, _ := unstructured.NestedSlice(u.Object, "spec", "sources")
		var refs []Ref
		for _, r := range raw {
			m, ok := r.(map[string]any)
			if !ok {
				continue
			}
			if ref, ok := refIn(m, u.GetNamespace()); ok {
				refs = append(refs, ref)
			}
		}
		return refs
	case kinds.ExternalArtifact.Kind:
		m, _, _ := unstructured.NestedMap(u.Object, "spec", "sourceRef")
		if ref, ok := refIn(m, u.GetNamespace()); ok {
			return []Ref{ref}
		}
	}
	return nil
}

// appliedBy is the Kustomization that applied u, from the labels
// kustomize-controller sets.
func appliedBy(u *unstructured.Unstructured) (Ref, bool) {
	l := u.GetLabels()
	name, ns := l[kustomizeGroup+"/name"], l[kustomizeGroup+"/namespace"]
	return Ref{Kind: kinds.Kustomization.Kind, Namespace: ns, Name: name}, name != "" && ns != ""
}

// kustomizeGroup prefixes the labels of what a Kustomization applied.
const kustomizeGroup = "kustomize.toolkit.fluxcd.io"

// refIn reads kind, name and namespace (ns when empty) from a reference.
func refIn(m map[string]any, ns string) (Ref, bool) {
	kind, _ := m["kind"].(string)
	name, _ := m["name"].(string)
	if n, _ := m["namespace"].(string); n != "" {
		ns = n
	}
	return Ref{Kind: kind, Namespace: ns, Name: name}, kind != "" && name != ""
}

// edgesTo lists the edges into u: its sources, then its dependencies.
func (idx index) edgesTo(u *unstructured.Unstructured) []Edge {
	to := refOf(u).String()
	var edges []Edge
	if src, ok := idx.source(u); ok {
		edges = append(edges, Edge{From: src.String(), To: to, Type: EdgeSource})
	}
	for _, src := range generatorSources(u) {
		edges = append(edges, Edge{From: src.String(), To: to, Type: EdgeSource})
	}
	for _, d := range dependsOn(u) {
		edges = append(edges, Edge{From: d.String(), To: to, Type: EdgeDependsOn})
	}
	if by, ok := appliedBy(u); ok && idx[by.String()] != nil && by.String() != to {
		edges = append(edges, Edge{From: by.String(), To: to, Type: EdgeApplies})
	}
	return edges
}

// waiting says what holds u back, "" when nothing does.
func (idx index) waiting(u *unstructured.Unstructured) string {
	var why []string
	if src, ok := idx.source(u); ok && artifactRevision(idx[src.String()]) == "" {
		why = append(why, fmt.Sprintf("%s waits for %s %s to have an artifact", u.GetName(), src.Kind, nameIn(src, u.GetNamespace())))
	}
	for _, d := range dependsOn(u) {
		if w := idx.waitsFor(u, d); w != "" {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// waitsFor says how u waits for its dependency d, "" if it does not: d
// must exist, be ready and, for a Kustomization, have applied its source's
// current revision, as kustomize-controller checks.
func (idx index) waitsFor(u *unstructured.Unstructured, d Ref) string {
	dep := idx[d.String()]
	name := nameIn(d, u.GetNamespace())
	if dep == nil {
		return fmt.Sprintf("%s waits for %s, which does not exist", u.GetName(), name)
	}
	need := ""
	if src, ok := idx.source(dep); ok {
		need = artifactRevision(idx[src.String()])
	}
	upToDate := true
	if d.Kind == kinds.Kustomization.Kind && need != "" {
		applied, _, _ := unstructured.NestedString(dep.Object, "status", "lastAppliedRevision")
		upToDate = applied == need
	}
	if State(dep) == StateReady && upToDate {
		return ""
	}
	if need == "" {
		return fmt.Sprintf("%s waits for %s", u.GetName(), name)
	}
	return fmt.Sprintf("%s waits for %s at %s", u.GetName(), name, need)
}

// nameIn is r's name, namespace-qualified when it is not ns.
func nameIn(r Ref, ns string) string {
	if r.Namespace == ns {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// artifactRevision is status.artifact.revision of u, "" for a nil u.
func artifactRevision(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	rev, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "revision")
	return rev
}
