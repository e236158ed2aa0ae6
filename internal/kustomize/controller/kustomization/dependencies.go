package kustomization

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/dependency"
)

// dependencies is how internal/apply/dependency reads Kustomizations: Flux's
// message for a missing dependency, and lastAppliedRevision, which the
// revision gate reads, as part of a dependency's readiness.
var dependencies = dependency.Kind[*kustomizev1.Kustomization]{
	New:                func() *kustomizev1.Kustomization { return &kustomizev1.Kustomization{} },
	NewList:            func() client.ObjectList { return &kustomizev1.KustomizationList{} },
	ObservedGeneration: func(k *kustomizev1.Kustomization) int64 { return k.Status.ObservedGeneration },
	NotFound: func(key types.NamespacedName, err error) error {
		return fmt.Errorf("dependency '%s' not found: %w", key, err)
	},
	Revision: func(k *kustomizev1.Kustomization) string { return k.Status.LastAppliedRevision },
}

// checkDependencies applies Flux's rules to every spec.dependsOn entry
// (internal/apply/dependency), adding the Kustomization's revision gate to the
// built-in check: a dependency that builds from the same source as obj
// must have applied the source's current revision.
func (r *Reconciler) checkDependencies(ctx context.Context, obj *kustomizev1.Kustomization, src Source) error {
	c := dependency.Checker[*kustomizev1.Kustomization]{
		Kind: dependencies, Reader: r.APIReader, Cache: r.Client,
		Additive: r.Options.AdditiveCELDependencyCheck, RequeueAfter: r.Options.RequeueDependency,
	}
	return c.Check(ctx, obj, func(dep *kustomizev1.Kustomization) error {
		if sameSource(obj, dep) && !hasRevision(src.GetArtifact(), dep.Status.LastAppliedRevision) {
			return fmt.Errorf("dependency '%s' revision is not up to date", client.ObjectKeyFromObject(dep))
		}
		return nil
	})
}
