package objectview

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/view/objectstate"
)

// PodStatus is what the tree shows of a Pod.
type PodStatus struct {
	Phase string `json:"phase"`
	// Ready is "<ready containers>/<containers>".
	Ready    string `json:"ready"`
	Restarts int32  `json:"restarts"`
	// Containers are the Pod's containers (init containers first), whose
	// logs the page reads.
	Containers []string `json:"containers"`
}

// workloadKinds are the apps/v1 kinds whose Pods the tree shows below
// them: a Deployment's through its ReplicaSets.
var workloadKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true}

// addPods nests below each Deployment, StatefulSet and DaemonSet of the
// tree the objects it owns (ownerReferences): a Deployment's ReplicaSets
// and their Pods, the others' Pods. Each namespace with workloads costs
// three lists, as the caller; a list it may not make is said on the
// workload's node.
func addPods(ctx context.Context, c client.Client, root *TreeNode) {
	byNS := map[string][]*TreeNode{}
	var walk func(n *TreeNode)
	walk = func(n *TreeNode) {
		if workloadKinds[n.Kind] && n.APIVersion == "apps/v1" && n.Namespace != "" {
			byNS[n.Namespace] = append(byNS[n.Namespace], n)
		}
		for i := range n.Children {
			walk(&n.Children[i])
		}
	}
	walk(root)
	for ns, nodes := range byNS {
		owned, err := ownedIn(ctx, c, ns)
		for _, n := range nodes {
			if err != nil {
				n.ChildrenError = err.Error()
				continue
			}
			n.Children = append(n.Children, owned.below(n.Kind, n.Name)...)
		}
	}
}

// owned is what a namespace's workloads own, by owner UID.
type owned struct {
	uids map[string]types.UID // Kind/name → UID of the workloads
	rs   map[types.UID][]*appsv1.ReplicaSet
	pods map[types.UID][]*corev1.Pod
}

func ownedIn(ctx context.Context, c client.Client, ns string) (*owned, error) {
	o := &owned{uids: map[string]types.UID{}, rs: map[types.UID][]*appsv1.ReplicaSet{}, pods: map[types.UID][]*corev1.Pod{}}
	lists := []struct {
		what string
		list client.ObjectList
	}{
		{"deployments", &appsv1.DeploymentList{}}, {"statefulsets", &appsv1.StatefulSetList{}},
		{"daemonsets", &appsv1.DaemonSetList{}}, {"replicasets", &appsv1.ReplicaSetList{}}, {"pods", &corev1.PodList{}},
	}
	for _, l := range lists {
		if err := c.List(ctx, l.list, client.InNamespace(ns)); err != nil {
			if apierrors.IsForbidden(err) {
				return nil, fmt.Errorf("you may not list %s in %s, so what runs below is not shown", l.what, ns)
			}
			return nil, fmt.Errorf("listing %s in %s: %w", l.what, ns, err)
		}
	}
	for i := range lists[0].list.(*appsv1.DeploymentList).Items {
		d := &lists[0].list.(*appsv1.DeploymentList).Items[i]
		o.uids["Deployment/"+d.Name] = d.UID
	}
	for i := range lists[1].list.(*appsv1.StatefulSetList).Items {
		s := &lists[1].list.(*appsv1.StatefulSetList).Items[i]
		o.uids["StatefulSet/"+s.Name] = s.UID
	}
	for i := range lists[2].list.(*appsv1.DaemonSetList).Items {
		d := &lists[2].list.(*appsv1.DaemonSetList).Items[i]
		o.uids["DaemonSet/"+d.Name] = d.UID
	}
	for i := range lists[3].list.(*appsv1.ReplicaSetList).Items {
		rs := &lists[3].list.(*appsv1.ReplicaSetList).Items[i]
		if ref := metav1.GetControllerOf(rs); ref != nil {
			o.rs[ref.UID] = append(o.rs[ref.UID], rs)
		}
	}
	for i := range lists[4].list.(*corev1.PodList).Items {
		p := &lists[4].list.(*corev1.PodList).Items[i]
		if ref := metav1.GetControllerOf(p); ref != nil {
			o.pods[ref.UID] = append(o.pods[ref.UID], p)
		}
	}
	return o, nil
}

// below is what the workload kind/name owns: ReplicaSets (newest first)
// with their Pods, or Pods, sorted by name.
func (o *owned) below(kind, name string) []TreeNode {
	uid, ok := o.uids[kind+"/"+name]
	if !ok {
		return nil
	}
	var out []TreeNode
	sets := o.rs[uid]
	sort.Slice(sets, func(i, j int) bool {
		if !sets[i].CreationTimestamp.Equal(&sets[j].CreationTimestamp) {
			return sets[j].CreationTimestamp.Before(&sets[i].CreationTimestamp)
		}
		return sets[i].Name < sets[j].Name
	})
	for _, rs := range sets {
		n := TreeNode{Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name, APIVersion: "apps/v1",
			State: liveState(rs, "ReplicaSet"), Children: o.podNodes(rs.UID)}
		out = append(out, n)
	}
	return append(out, o.podNodes(uid)...)
}

func (o *owned) podNodes(owner types.UID) []TreeNode {
	pods := o.pods[owner]
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	out := make([]TreeNode, 0, len(pods))
	for _, p := range pods {
		out = append(out, TreeNode{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, APIVersion: "v1",
			State: liveState(p, "Pod"), Children: []TreeNode{}, Pod: podStatus(p)})
	}
	return out
}

// liveState is objectstate.Live of a typed object of kind (apps/v1 or
// v1: list items carry no kind of their own).
func liveState(obj client.Object, kind string) string {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return objectstate.Unknown
	}
	u := &unstructured.Unstructured{Object: m}
	gv := appsv1.SchemeGroupVersion
	if kind == "Pod" {
		gv = corev1.SchemeGroupVersion
	}
	u.SetGroupVersionKind(gv.WithKind(kind))
	return objectstate.Live(u)
}

func podStatus(p *corev1.Pod) *PodStatus {
	s := &PodStatus{Phase: string(p.Status.Phase), Containers: []string{}}
	ready := 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			ready++
		}
		s.Restarts += cs.RestartCount
	}
	for _, c := range p.Spec.InitContainers {
		s.Containers = append(s.Containers, c.Name)
	}
	for _, c := range p.Spec.Containers {
		s.Containers = append(s.Containers, c.Name)
	}
	s.Ready = fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers))
	return s
}
