package objectview

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/view/inventorytree"
	"github.com/weir-gitops/weir/internal/view/kinds"
	"github.com/weir-gitops/weir/internal/view/objectstate"
)

// Ref names one toolkit object (objectstate's shape, shared with
// fleetview).
type Ref = objectstate.Ref

// Summary is objectstate's.
type Summary = objectstate.Summary

// ErrUnknownKind is returned for a Ref whose kind is not a toolkit kind.
var ErrUnknownKind = errors.New("unknown kind")

// Condition is one status condition, times in RFC 3339.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime"`
}

// HistoryEntry is one entry of status.history. A Kustomization's
// revision is the snapshot's "revision" metadata; a HelmRelease's is
// chartName@chartVersion, its times the release's deploy times, its status
// the release's and its digest the release's.
type HistoryEntry struct {
	Revision             string `json:"revision"`
	FirstReconciled      string `json:"firstReconciled"`
	LastReconciled       string `json:"lastReconciled"`
	TotalReconciliations int64  `json:"totalReconciliations"`
	LastReconciledStatus string `json:"lastReconciledStatus"`
	Digest               string `json:"digest"`
	// HelmRevision is a HelmRelease snapshot's release revision in Helm's
	// storage (the N of sh.helm.release.v1.<name>.vN); 0 otherwise.
	HelmRevision int `json:"helmRevision,omitempty"`
}

// TreeNode is one object of the inventory tree with the state of its live
// object (objectstate.Live).
type TreeNode struct {
	Kind       string     `json:"kind"`
	Namespace  string     `json:"namespace"`
	Name       string     `json:"name"`
	APIVersion string     `json:"apiVersion"`
	State      string     `json:"state"`
	Children   []TreeNode `json:"children"`
	// Pod is a Pod's phase, readiness, restarts and containers.
	Pod *PodStatus `json:"pod,omitempty"`
	// ChildrenError says why a workload's ReplicaSets and Pods are not
	// shown (the caller may not list them).
	ChildrenError string `json:"childrenError,omitempty"`
}

// Detail is what the object page shows.
type Detail struct {
	Summary    Summary        `json:"summary"`
	Conditions []Condition    `json:"conditions"`
	History    []HistoryEntry `json:"history"`
	// Tree is the inventory tree of a Kustomization or HelmRelease; nil
	// for other kinds.
	Tree *TreeNode `json:"tree"`
	// TreeError says why the tree could not be walked (the caller may not
	// read a nested object); "" otherwise.
	TreeError string `json:"treeError,omitempty"`
	// Source is what the object reads from; nil for a kind without one.
	Source    *Ref           `json:"source"`
	DependsOn []Ref          `json:"dependsOn"`
	Spec      map[string]any `json:"spec"`
	// SpecYAML is the live spec as YAML, as `kubectl get -o yaml` shows it.
	SpecYAML string `json:"specYAML"`
	// Consumers are the objects that read this source (sourceRef,
	// chartRef, chart.spec.sourceRef, imageRepositoryRef), among those the
	// caller may list; nil for a kind nothing reads.
	Consumers []Ref `json:"consumers,omitempty"`
	// AppliedBy is the Kustomization whose inventory holds the object, as
	// its kustomize.toolkit.fluxcd.io/name and /namespace labels say.
	AppliedBy *Ref `json:"appliedBy,omitempty"`
	// Helm is a HelmRelease's chart and values; nil for other kinds.
	Helm *Helm `json:"helm,omitempty"`
	// Permissions is left nil by Get: the caller fills it with
	// Permissions, which needs the user's name.
	Permissions *Perms `json:"permissions"`
}

// resolve returns ref's kind.
func resolve(ref Ref) (kinds.Kind, error) {
	k, ok := kinds.ByKind(ref.Kind)
	if !ok {
		return kinds.Kind{}, fmt.Errorf("%w %q", ErrUnknownKind, ref.Kind)
	}
	return k, nil
}

// read gets the object ref names, as the caller. A missing object is an
// error apierrors.IsNotFound recognises.
func read(ctx context.Context, c client.Client, ref Ref) (kinds.Kind, *unstructured.Unstructured, error) {
	k, err := resolve(ref)
	if err != nil {
		return k, nil, err
	}
	u := k.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		return k, nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return k, u, nil
}

// Get reads the object ref names and what its page shows. cfg reaches
// Helm's storage for a HelmRelease without status.inventory (nil: such a
// release's tree is empty).
func Get(ctx context.Context, c client.Client, cfg *rest.Config, ref Ref) (*Detail, error) {
	k, u, err := read(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	d := &Detail{
		Summary:    objectstate.Summarize(u),
		Conditions: conditionsOf(u),
		History:    historyOf(u),
		DependsOn:  dependsOn(u),
		Source:     sourceRef(k, u),
	}
	d.Spec, _, _ = unstructured.NestedMap(u.Object, "spec")
	if d.Spec != nil {
		if b, err := yaml.Marshal(map[string]any{"spec": d.Spec}); err == nil {
			d.SpecYAML = string(b)
		}
	}
	d.AppliedBy = appliedBy(u)
	if k.Kind == kinds.HelmRelease.Kind {
		d.Helm = helmOf(ctx, c, u)
	}
	if k.Source || k.Kind == kinds.ImageRepository.Kind {
		d.Consumers = consumers(ctx, c, ref)
	}
	if k.Kind == kinds.Kustomization.Kind || k.Kind == kinds.HelmRelease.Kind {
		opts := inventorytree.Options{States: true}
		if cfg != nil {
			opts.Storage = inventorytree.HelmStorage(cfg, c)
		}
		tree, err := inventorytree.Build(ctx, c, k.GVK(), ref.Namespace, ref.Name, opts)
		if err != nil {
			d.TreeError = err.Error()
		} else {
			n := treeNode(tree)
			addPods(ctx, c, &n)
			d.Tree = &n
		}
	}
	return d, nil
}

// IsNotFound reports an error of Get, Events, Diff or Permissions that
// says the object does not exist.
func IsNotFound(err error) bool { return apierrors.IsNotFound(err) }

func conditionsOf(u *unstructured.Unstructured) []Condition {
	conds := objectstate.Conditions(u)
	out := make([]Condition, 0, len(conds))
	for _, c := range conds {
		out = append(out, Condition{
			Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastTransitionTime: rfc3339(c.LastTransitionTime.Time),
		})
	}
	return out
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// historyOf reads status.history: meta.History for a Kustomization,
// helmv2.Snapshots for a HelmRelease.
func historyOf(u *unstructured.Unstructured) []HistoryEntry {
	out := []HistoryEntry{}
	raw, ok, _ := unstructured.NestedSlice(u.Object, "status", "history")
	if !ok {
		return out
	}
	status := map[string]any{"history": raw}
	if u.GetKind() == helmv2.HelmReleaseKind {
		var s struct {
			History helmv2.Snapshots `json:"history"`
		}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(status, &s) == nil {
			for _, h := range s.History {
				out = append(out, HistoryEntry{
					Revision: h.ChartName + "@" + h.ChartVersion, FirstReconciled: rfc3339(h.FirstDeployed.Time),
					LastReconciled: rfc3339(h.LastDeployed.Time), TotalReconciliations: 1,
					LastReconciledStatus: h.Status, Digest: h.Digest, HelmRevision: h.Version,
				})
			}
		}
		return out
	}
	var s struct {
		History meta.History `json:"history"`
	}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(status, &s) == nil {
		for _, h := range s.History {
			out = append(out, HistoryEntry{
				Revision: h.Metadata["revision"], FirstReconciled: rfc3339(h.FirstReconciled.Time),
				LastReconciled: rfc3339(h.LastReconciled.Time), TotalReconciliations: h.TotalReconciliations,
				LastReconciledStatus: h.LastReconciledStatus, Digest: h.Digest,
			})
		}
	}
	return out
}

// dependsOn reads spec.dependsOn, the namespace defaulting to the object's.
func dependsOn(u *unstructured.Unstructured) []Ref {
	out := []Ref{}
	deps, _, _ := unstructured.NestedSlice(u.Object, "spec", "dependsOn")
	for _, d := range deps {
		m, _ := d.(map[string]any)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = u.GetNamespace()
		}
		out = append(out, Ref{Kind: u.GetKind(), Namespace: ns, Name: name})
	}
	return out
}

// sourceRef is the object u reads from: a Kustomization's or an
// ImageUpdateAutomation's spec.sourceRef, a HelmRelease's chartRef or
// its chart's sourceRef, a HelmChart's sourceRef, an ImagePolicy's
// imageRepositoryRef; nil for other kinds.
// consumerKinds are the kinds whose objects read a source.
var consumerKinds = []kinds.Kind{kinds.Kustomization, kinds.HelmRelease, kinds.HelmChart, kinds.ImagePolicy}

// consumers lists, cluster-wide as the caller, the objects whose source is
// ref; a kind the caller may not list is left out.
func consumers(ctx context.Context, c client.Client, ref Ref) []Ref {
	out := []Ref{}
	for _, k := range consumerKinds {
		list := k.NewList()
		if err := c.List(ctx, list); err != nil {
			continue
		}
		for i := range list.Items {
			u := &list.Items[i]
			if src := sourceRef(k, u); src != nil && *src == ref {
				out = append(out, Ref{Kind: k.Kind, Namespace: u.GetNamespace(), Name: u.GetName()})
			}
		}
	}
	return out
}

// appliedBy reads the labels kustomize-controller sets on what it applies.
func appliedBy(u *unstructured.Unstructured) *Ref {
	l := u.GetLabels()
	name, ns := l[kustomizev1.GroupVersion.Group+"/name"], l[kustomizev1.GroupVersion.Group+"/namespace"]
	if name == "" || ns == "" {
		return nil
	}
	return &Ref{Kind: kinds.Kustomization.Kind, Namespace: ns, Name: name}
}

func sourceRef(k kinds.Kind, u *unstructured.Unstructured) *Ref {
	var paths [][]string
	switch k.Kind {
	case kinds.HelmRelease.Kind:
		paths = [][]string{{"spec", "chartRef"}, {"spec", "chart", "spec", "sourceRef"}}
	case kinds.ImagePolicy.Kind:
		paths = [][]string{{"spec", "imageRepositoryRef"}}
	default:
		paths = [][]string{{"spec", "sourceRef"}}
	}
	for _, p := range paths {
		m, ok, _ := unstructured.NestedStringMap(u.Object, p...)
		if !ok || m["name"] == "" {
			continue
		}
		kind := m["kind"]
		if kind == "" && k.Kind == kinds.ImagePolicy.Kind {
			kind = kinds.ImageRepository.Kind
		}
		ns := m["namespace"]
		if ns == "" {
			ns = u.GetNamespace()
		}
		return &Ref{Kind: kind, Namespace: ns, Name: m["name"]}
	}
	return nil
}

// treeNode converts inventorytree's node to the page's.
func treeNode(n *inventorytree.Node) TreeNode {
	gv := n.Version
	if g := n.Resource.GroupKind.Group; g != "" && gv != "" {
		gv = g + "/" + gv
	}
	out := TreeNode{
		Kind: n.Resource.GroupKind.Kind, Namespace: n.Resource.Namespace, Name: n.Resource.Name,
		APIVersion: gv, State: n.State, Children: make([]TreeNode, 0, len(n.Resources)),
	}
	for _, c := range n.Resources {
		out.Children = append(out.Children, treeNode(c))
	}
	return out
}
