package fleetview

import (
	"cmp"
	"slices"
)

// layout sets each node's Layer to the longest path reaching it from a node
// without incoming edges (Kahn's order; the members of a dependsOn cycle,
// which never become free, are placed one layer below their placed
// predecessors), and its Order within the layer by the mean order of its
// predecessors, which keeps edges short and rarely crossing.
func layout(nodes []Node, edges []Edge) {
	at := make(map[string]int, len(nodes))
	for i, n := range nodes {
		at[n.ID] = i
	}
	preds := make([][]int, len(nodes))
	succs := make([][]int, len(nodes))
	indegree := make([]int, len(nodes))
	for _, e := range edges {
		from, to := at[e.From], at[e.To]
		preds[to] = append(preds[to], from)
		succs[from] = append(succs[from], to)
		indegree[to]++
	}
	placed := make([]bool, len(nodes))
	var queue []int
	for i := range nodes {
		if indegree[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		placed[i] = true
		for _, s := range succs[i] {
			nodes[s].Layer = max(nodes[s].Layer, nodes[i].Layer+1)
			if indegree[s]--; indegree[s] == 0 {
				queue = append(queue, s)
			}
		}
	}
	for i := range nodes {
		if !placed[i] {
			for _, p := range preds[i] {
				if placed[p] {
					nodes[i].Layer = max(nodes[i].Layer, nodes[p].Layer+1)
				}
			}
		}
	}
	order(nodes, preds)
}

// order numbers the nodes of each layer, layer by layer from the top: by
// the mean Order of their predecessors in earlier layers, then by kind,
// namespace and name.
func order(nodes []Node, preds [][]int) {
	byLayer := map[int][]int{}
	top := 0
	for i, n := range nodes {
		byLayer[n.Layer] = append(byLayer[n.Layer], i)
		top = max(top, n.Layer)
	}
	weight := make([]float64, len(nodes))
	for layer := 0; layer <= top; layer++ {
		members := byLayer[layer]
		for _, i := range members {
			sum, n := 0.0, 0
			for _, p := range preds[i] {
				if nodes[p].Layer < layer {
					sum += float64(nodes[p].Order)
					n++
				}
			}
			if n > 0 {
				weight[i] = sum / float64(n)
			}
		}
		slices.SortStableFunc(members, func(a, b int) int {
			na, nb := nodes[a], nodes[b]
			return cmp.Or(cmp.Compare(weight[a], weight[b]), cmp.Compare(kindRank(na.Kind), kindRank(nb.Kind)),
				cmp.Compare(na.Namespace, nb.Namespace), cmp.Compare(na.Name, nb.Name))
		})
		for o, i := range members {
			nodes[i].Order = o
		}
	}
}
