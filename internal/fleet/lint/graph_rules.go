package lint

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/fleet"
)

func missingEntryPoint(c *fleet.Cluster, _ Options) []Finding {
	if !c.MissingRoot {
		return nil
	}
	return []Finding{{File: c.Entry, Message: fmt.Sprintf(
		"no Kustomization syncs %s (none has spec.path ./%s), while other entry points of the repository have their own root sync: "+
			"this cluster is never bootstrapped from Git, and a dependsOn on its root waits forever", c.Entry, c.Entry)}}
}

// graphReader serves the cluster's Kustomizations and HelmReleases to
// internal/apply/dependency's cycle finder.
type graphReader struct{ c *fleet.Cluster }

func (r graphReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *kustomizev1.Kustomization:
		if n := r.c.Node(kustomizev1.KustomizationKind, key.Namespace, key.Name); n != nil && n.Kustomization != nil {
			n.Kustomization.DeepCopyInto(o)
			return nil
		}
	case *helmv2.HelmRelease:
		if n := r.c.Node(helmv2.HelmReleaseKind, key.Namespace, key.Name); n != nil && n.HelmRelease != nil {
			n.HelmRelease.DeepCopyInto(o)
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

func (graphReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return fmt.Errorf("not supported")
}

func dependencyCycle(c *fleet.Cluster, _ Options) []Finding {
	ks := dependency.Checker[*kustomizev1.Kustomization]{Cache: graphReader{c},
		Kind: dependency.Kind[*kustomizev1.Kustomization]{New: func() *kustomizev1.Kustomization { return &kustomizev1.Kustomization{} }}}
	hr := dependency.Checker[*helmv2.HelmRelease]{Cache: graphReader{c},
		Kind: dependency.Kind[*helmv2.HelmRelease]{New: func() *helmv2.HelmRelease { return &helmv2.HelmRelease{} }}}
	seen := map[string]bool{}
	var out []Finding
	for _, n := range c.Nodes {
		var path []string
		switch {
		case n.Kustomization != nil:
			path = ks.FindCycle(context.Background(), n.Kustomization)
		case n.HelmRelease != nil:
			path = hr.FindCycle(context.Background(), n.HelmRelease)
		}
		if len(path) == 0 {
			continue
		}
		members := slices.Clone(path[:len(path)-1])
		slices.Sort(members)
		key := n.Object.GetKind() + strings.Join(members, ",")
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, at(n, fmt.Sprintf("dependsOn cycle: %s; none of them ever becomes ready", strings.Join(path, " → "))))
	}
	return out
}

// incomplete names the Kustomizations the loader could not build (their
// source is not local): what they apply is missing from the graph.
func incomplete(c *fleet.Cluster) string {
	var ids []string
	for _, n := range c.Kustomizations() {
		if !n.Built && c.Sources[n.Source] != nil {
			ids = append(ids, n.ID())
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf(" (the graph may be incomplete: %s not built, its source is not this repository; see --source)", strings.Join(ids, ", "))
}

// unsure is Error when the graph is complete, else Warning with the note.
func unsure(c *fleet.Cluster, msg string) (Severity, string) {
	if note := incomplete(c); note != "" {
		return Warning, msg + note
	}
	return Error, msg
}

func danglingDependency(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range c.Nodes {
		for _, d := range refs(n.Object.GetNamespace(), n.DependsOn()) {
			ns, name, _ := strings.Cut(d, "/")
			if c.Node(n.Object.GetKind(), ns, name) != nil {
				continue
			}
			sev, msg := unsure(c, fmt.Sprintf("dependsOn '%s' names no %s the graph of %s creates: it waits forever", d, n.Object.GetKind(), c.Entry))
			f := at(n, msg)
			f.Severity = sev
			out = append(out, f)
		}
	}
	return out
}

func refs(ns string, deps []meta.DependencyReference) []string {
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		out = append(out, dependency.Key(ns, d).String())
	}
	return out
}

func missingSource(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range c.Nodes {
		if n.Source == "" || c.Sources[n.Source] != nil {
			continue
		}
		sev, msg := unsure(c, fmt.Sprintf("source %s is not in the graph of %s: %s never reconciles (an object bootstrap creates outside Git can be named with --assume)",
			n.Source, c.Entry, n.ID()))
		f := at(n, msg)
		f.Severity = sev
		out = append(out, f)
	}
	return out
}

func healthGate(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, dep := range c.Kustomizations() {
		spec := dep.Kustomization.Spec
		if dep == c.Root || spec.Wait || len(spec.HealthChecks) > 0 || len(spec.HealthCheckExprs) > 0 {
			continue
		}
		var dependents []string
		for _, n := range c.Kustomizations() {
			if slices.Contains(refs(n.Object.GetNamespace(), n.Kustomization.Spec.DependsOn), dep.Object.GetNamespace()+"/"+dep.Object.GetName()) {
				dependents = append(dependents, n.ID())
			}
		}
		if len(dependents) > 0 {
			out = append(out, at(dep, fmt.Sprintf("Ready as soon as it has applied (wait: false, no healthChecks): %s, depending on it, may start before its objects are healthy; set wait: true or healthChecks",
				strings.Join(dependents, ", "))))
		}
	}
	return out
}

func crossNamespaceRef(c *fleet.Cluster, opts Options) []Finding {
	if !opts.NoCrossNamespaceRefs {
		return nil
	}
	var out []Finding
	for _, n := range c.Nodes {
		ns := ""
		switch {
		case n.Kustomization != nil:
			ns = n.Kustomization.Spec.SourceRef.Namespace
		case n.HelmRelease != nil && n.HelmRelease.Spec.ChartRef != nil:
			ns = n.HelmRelease.Spec.ChartRef.Namespace
		case n.HelmRelease != nil && n.HelmRelease.Spec.Chart != nil:
			ns = n.HelmRelease.Spec.Chart.Spec.SourceRef.Namespace
		}
		if ns != "" && ns != n.Object.GetNamespace() {
			out = append(out, at(n, fmt.Sprintf("source %s is in namespace %s, not %s: refused under --no-cross-namespace-refs", n.Source, ns, n.Object.GetNamespace())))
		}
	}
	return out
}
