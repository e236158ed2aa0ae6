package helmrelease

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// valuesIndex holds the reconcile.RefKey of every ConfigMap and Secret
// of spec.valuesFrom.
const valuesIndex = ".spec.valuesFrom"

// valuesRefs lists the keys of valuesIndex for a HelmRelease.
func valuesRefs(o client.Object) []string {
	hr, ok := o.(*helmv2.HelmRelease)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(hr.Spec.ValuesFrom))
	for _, ref := range hr.Spec.ValuesFrom {
		keys = append(keys, reconcile.RefKey(ref.Kind, hr.Namespace, ref.Name))
	}
	return keys
}

// configWatches are the watches of --watch-configs-label-selector (Flux's
// `reconcile.fluxcd.io/watch: Enabled`), the Kustomization's own: a
// labelled valuesFrom ConfigMap or Secret that changes queues the
// HelmReleases reading it at once, which upgrade with the new values.
func (r *Reconciler) configWatches() []reconcile.Watch {
	return reconcile.ConfigWatches(r.Options.ConfigsSelector, func(ctx context.Context, key string) []crreconcile.Request {
		return reconcile.Lookup(ctx, r.Client, dependencies.NewList, valuesIndex, key)
	})
}
