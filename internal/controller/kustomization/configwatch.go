package kustomization

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// configIndex holds "<Kind>/<namespace>/<name>" of every ConfigMap and
// Secret a Kustomization reads: spec.postBuild.substituteFrom and
// spec.decryption.secretRef.
const configIndex = ".spec.configRefs"

// configRefs lists the keys of configIndex for k.
func configRefs(o client.Object) []string {
	k := o.(*kustomizev1.Kustomization)
	var keys []string
	if pb := k.Spec.PostBuild; pb != nil {
		for _, ref := range pb.SubstituteFrom {
			keys = append(keys, ref.Kind+"/"+types.NamespacedName{Namespace: k.Namespace, Name: ref.Name}.String())
		}
	}
	if d := k.Spec.Decryption; d != nil && d.SecretRef != nil {
		keys = append(keys, "Secret/"+types.NamespacedName{Namespace: k.Namespace, Name: d.SecretRef.Name}.String())
	}
	return keys
}

// configWatches returns the watches of --watch-configs-label-selector:
// ConfigMaps and Secrets matching sel, mapped to the Kustomizations that
// read them. The manager's cache should hold only matching objects (see
// internal/app); the predicate checks the labels again so that a cache
// holding more never triggers on an unlabelled object.
func (r *Reconciler) configWatches(sel labels.Selector) []reconcile.Watch {
	watch := func(obj client.Object, kind string) reconcile.Watch {
		return reconcile.Watch{
			Object: obj,
			Handler: handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []crreconcile.Request {
				return r.lookup(ctx, configIndex, kind+"/"+types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String())
			}),
			Predicates: []predicate.Predicate{configChanged{sel: sel}},
		}
	}
	return []reconcile.Watch{watch(&corev1.ConfigMap{}, "ConfigMap"), watch(&corev1.Secret{}, "Secret")}
}

// configChanged passes creations, deletions and data changes of objects
// whose labels match sel.
type configChanged struct {
	predicate.Funcs
	sel labels.Selector
}

func (p configChanged) Create(e event.CreateEvent) bool {
	return p.sel.Matches(labels.Set(e.Object.GetLabels()))
}
func (p configChanged) Delete(e event.DeleteEvent) bool {
	return p.sel.Matches(labels.Set(e.Object.GetLabels()))
}
func (configChanged) Generic(event.GenericEvent) bool { return false }
func (p configChanged) Update(e event.UpdateEvent) bool {
	if !p.sel.Matches(labels.Set(e.ObjectNew.GetLabels())) && !p.sel.Matches(labels.Set(e.ObjectOld.GetLabels())) {
		return false
	}
	switch older := e.ObjectOld.(type) {
	case *corev1.ConfigMap:
		newer, ok := e.ObjectNew.(*corev1.ConfigMap)
		return !ok || !reflect.DeepEqual(older.Data, newer.Data) || !reflect.DeepEqual(older.BinaryData, newer.BinaryData)
	case *corev1.Secret:
		newer, ok := e.ObjectNew.(*corev1.Secret)
		return !ok || !reflect.DeepEqual(older.Data, newer.Data)
	}
	return false
}
