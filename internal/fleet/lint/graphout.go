package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/fleet"
)

// GraphFormats are the values of `weir lint --graph -o`.
var GraphFormats = []string{"dot", "mermaid", "json"}

// Edge kinds of the printed graph.
const (
	EdgeSource    = "source"    // a source feeds a node
	EdgeApplies   = "applies"   // a Kustomization applies a node
	EdgeDependsOn = "dependsOn" // a node waits for another
)

// GraphEdge is one edge of a cluster's graph, between node ids
// (Kind/namespace/name).
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
}

// ClusterGraph is the printable graph of one cluster.
type ClusterGraph struct {
	Entry string      `json:"entry"`
	Nodes []string    `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
}

// Graphs returns each cluster's sources, Kustomizations and HelmReleases
// with the edges between them.
func Graphs(g *fleet.Graph) []ClusterGraph {
	var out []ClusterGraph
	for _, c := range g.Clusters {
		cg := ClusterGraph{Entry: c.Entry, Nodes: []string{}, Edges: []GraphEdge{}}
		for key := range c.Sources {
			cg.Nodes = append(cg.Nodes, key)
		}
		slices.Sort(cg.Nodes)
		for _, n := range c.Nodes {
			cg.Nodes = append(cg.Nodes, n.ID())
			if n.Source != "" {
				cg.Edges = append(cg.Edges, GraphEdge{From: n.Source, To: n.ID(), Kind: EdgeSource})
			}
			if n.Parent != nil {
				cg.Edges = append(cg.Edges, GraphEdge{From: n.Parent.ID(), To: n.ID(), Kind: EdgeApplies})
			}
			for _, ref := range n.DependsOn() {
				key := dependency.Key(n.Object.GetNamespace(), ref)
				cg.Edges = append(cg.Edges, GraphEdge{From: n.ID(), To: fleet.KeyOf(n.Object.GetKind(), key.Namespace, key.Name), Kind: EdgeDependsOn})
			}
		}
		out = append(out, cg)
	}
	return out
}

// WriteGraph prints the graphs in format.
func WriteGraph(w io.Writer, format string, graphs []ClusterGraph) error {
	switch format {
	case "", "dot":
		return writeDot(w, graphs)
	case "mermaid":
		return writeMermaid(w, graphs)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(graphs)
	}
	return fmt.Errorf("unknown graph format %q: want one of %s", format, strings.Join(GraphFormats, ", "))
}

var dotStyles = map[string]string{EdgeSource: "", EdgeApplies: " [style=dotted]", EdgeDependsOn: " [style=dashed, label=\"dependsOn\"]"}

func writeDot(w io.Writer, graphs []ClusterGraph) error {
	var b strings.Builder
	b.WriteString("digraph weir {\n  rankdir=LR;\n  node [shape=box];\n")
	for i, g := range graphs {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%q;\n", i, g.Entry)
		for _, n := range g.Nodes {
			fmt.Fprintf(&b, "    %q;\n", g.Entry+":"+n)
		}
		for _, e := range g.Edges {
			fmt.Fprintf(&b, "    %q -> %q%s;\n", g.Entry+":"+e.From, g.Entry+":"+e.To, dotStyles[e.Kind])
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

var mermaidArrows = map[string]string{EdgeSource: "-->", EdgeApplies: "-.->", EdgeDependsOn: "==>|dependsOn|"}

func writeMermaid(w io.Writer, graphs []ClusterGraph) error {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for i, g := range graphs {
		ids := map[string]string{}
		fmt.Fprintf(&b, "  subgraph c%d [%q]\n", i, g.Entry)
		for j, n := range g.Nodes {
			ids[n] = fmt.Sprintf("c%dn%d", i, j)
			fmt.Fprintf(&b, "    %s[%q]\n", ids[n], n)
		}
		for _, e := range g.Edges {
			from, to := ids[e.From], ids[e.To]
			if to == "" { // a dangling dependsOn
				to = fmt.Sprintf("c%dx%d", i, len(ids))
				ids[e.To] = to
				fmt.Fprintf(&b, "    %s[%q]:::missing\n", to, e.To+" (missing)")
			}
			if from == "" {
				from = fmt.Sprintf("c%dx%d", i, len(ids))
				ids[e.From] = from
				fmt.Fprintf(&b, "    %s[%q]:::missing\n", from, e.From+" (missing)")
			}
			fmt.Fprintf(&b, "    %s %s %s\n", from, mermaidArrows[e.Kind], to)
		}
		b.WriteString("  end\n")
	}
	b.WriteString("  classDef missing stroke-dasharray: 5 5\n")
	_, err := io.WriteString(w, b.String())
	return err
}
