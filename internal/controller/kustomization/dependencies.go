package kustomization

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// errDependencyCycle marks a dependsOn graph that leads back to the
// Kustomization being reconciled.
var errDependencyCycle = errors.New("dependency cycle")

// dependencyKey names the Kustomization ref points at from obj.
func dependencyKey(obj *kustomizev1.Kustomization, ref meta.DependencyReference) types.NamespacedName {
	ns := ref.Namespace
	if ns == "" {
		ns = obj.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: ref.Name}
}

// checkDependencies applies Flux's rules to every spec.dependsOn entry, in
// order, and reports the first that is not ready. Dependencies are read
// uncached so a status written a moment ago counts.
func (r *Reconciler) checkDependencies(ctx context.Context, obj *kustomizev1.Kustomization, src Source) error {
	for _, ref := range obj.Spec.DependsOn {
		key := dependencyKey(obj, ref)
		var dep kustomizev1.Kustomization
		if err := r.APIReader.Get(ctx, key, &dep); err != nil {
			return r.waitForDependency(fmt.Errorf("dependency '%s' not found: %w", key, err))
		}
		if ref.ReadyExpr != "" {
			ready, err := r.evalReadyExpr(ctx, ref.ReadyExpr, obj, &dep)
			if err != nil {
				return err
			}
			if !ready {
				return r.waitForDependency(fmt.Errorf("dependency '%s' is not ready according to readyExpr eval", key))
			}
			if !r.Options.AdditiveCELDependencyCheck {
				continue
			}
		}
		if err := dependencyReady(obj, &dep, src); err != nil {
			if cycle := r.findCycle(ctx, obj); cycle != nil {
				return r.waitForDependency(fmt.Errorf("%w: %s", errDependencyCycle, strings.Join(cycle, " -> ")))
			}
			return r.waitForDependency(err)
		}
	}
	return nil
}

// dependencyReady is Flux's built-in check: the dependency is Ready at its
// generation and, when it builds from the same source as obj, has applied
// the source's current revision.
func dependencyReady(obj, dep *kustomizev1.Kustomization, src Source) error {
	key := types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name}
	if len(dep.Status.Conditions) == 0 || dep.Generation != dep.Status.ObservedGeneration ||
		!apimeta.IsStatusConditionTrue(dep.Status.Conditions, meta.ReadyCondition) {
		return fmt.Errorf("dependency '%s' is not ready", key)
	}
	if sameSource(obj, dep) && !hasRevision(src.GetArtifact(), dep.Status.LastAppliedRevision) {
		return fmt.Errorf("dependency '%s' revision is not up to date", key)
	}
	return nil
}

func (r *Reconciler) waitForDependency(err error) error {
	return &errs.Waiting{Err: err, Reason: meta.DependencyNotReadyReason, RequeueAfter: r.Options.RequeueDependency}
}

// findCycle walks dependsOn from obj through the cache and returns the path
// of a cycle through obj ("ns/a", "ns/b", "ns/a"), or nil. Only cycles
// that pass through obj are reported: a Kustomization that merely depends on
// a cycle is waiting, not part of it.
func (r *Reconciler) findCycle(ctx context.Context, obj *kustomizev1.Kustomization) []string {
	start := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	visited := map[types.NamespacedName]bool{}
	var walk func(cur *kustomizev1.Kustomization, path []string) []string
	walk = func(cur *kustomizev1.Kustomization, path []string) []string {
		for _, ref := range cur.Spec.DependsOn {
			next := dependencyKey(cur, ref)
			if next == start {
				return append(slices.Clone(path), next.String())
			}
			if visited[next] {
				continue
			}
			visited[next] = true
			var dep kustomizev1.Kustomization
			if err := r.Client.Get(ctx, next, &dep); err != nil {
				continue
			}
			if found := walk(&dep, append(path, next.String())); found != nil {
				return found
			}
		}
		return nil
	}
	return walk(obj, []string{start.String()})
}
