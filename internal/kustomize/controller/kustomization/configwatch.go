package kustomization

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// configIndex holds the reconcile.RefKey of every ConfigMap and Secret
// a Kustomization reads: spec.postBuild.substituteFrom and
// spec.decryption.secretRef.
const configIndex = ".spec.configRefs"

// configRefs lists the keys of configIndex for k.
func configRefs(o client.Object) []string {
	k := o.(*kustomizev1.Kustomization)
	var keys []string
	if pb := k.Spec.PostBuild; pb != nil {
		for _, ref := range pb.SubstituteFrom {
			keys = append(keys, reconcile.RefKey(ref.Kind, k.Namespace, ref.Name))
		}
	}
	if d := k.Spec.Decryption; d != nil && d.SecretRef != nil {
		keys = append(keys, reconcile.RefKey("Secret", k.Namespace, d.SecretRef.Name))
	}
	return keys
}

// configWatches returns the watches of --watch-configs-label-selector,
// mapped to the Kustomizations that read the object.
func (r *Reconciler) configWatches(sel labels.Selector) []reconcile.Watch {
	return reconcile.ConfigWatches(sel, func(ctx context.Context, key string) []crreconcile.Request {
		return r.lookup(ctx, configIndex, key)
	})
}
