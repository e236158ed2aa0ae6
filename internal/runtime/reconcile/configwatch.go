package reconcile

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
)

// RefKey is the index key of an object another refers to by kind
// ("<Kind>/<namespace>/<name>"): a source in a chartRef or sourceRef, a
// ConfigMap or Secret read for values or substitution (the index
// ConfigWatches looks readers up with).
func RefKey(kind, namespace, name string) string {
	return kind + "/" + types.NamespacedName{Namespace: namespace, Name: name}.String()
}

// ConfigWatches returns the watches of --watch-configs-label-selector
// (Flux's default `reconcile.fluxcd.io/watch=Enabled`): ConfigMaps and
// Secrets matching sel, mapped by readers (given the object's RefKey) to
// the objects that read them: a Kustomization's substituteFrom and
// decryption Secret, a HelmRelease's valuesFrom. The manager's cache should
// hold only matching objects (see internal/app); the predicate checks the
// labels again so that a cache holding more never triggers on an
// unlabelled object.
func ConfigWatches(sel labels.Selector, readers func(ctx context.Context, key string) []crreconcile.Request) []Watch {
	watch := func(obj client.Object, kind string) Watch {
		return Watch{
			Object: obj,
			Handler: handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []crreconcile.Request {
				return readers(ctx, RefKey(kind, o.GetNamespace(), o.GetName()))
			}),
			Predicates: []predicate.Predicate{ConfigChanged{Selector: sel}},
		}
	}
	return []Watch{watch(&corev1.ConfigMap{}, "ConfigMap"), watch(&corev1.Secret{}, "Secret")}
}

// ConfigChanged passes creations, deletions and data changes of
// ConfigMaps and Secrets whose labels match Selector.
type ConfigChanged struct {
	predicate.Funcs
	Selector labels.Selector
}

// Create passes a matching object.
func (p ConfigChanged) Create(e event.CreateEvent) bool {
	return p.Selector.Matches(labels.Set(e.Object.GetLabels()))
}

// Delete passes a matching object.
func (p ConfigChanged) Delete(e event.DeleteEvent) bool {
	return p.Selector.Matches(labels.Set(e.Object.GetLabels()))
}

// Generic passes nothing.
func (ConfigChanged) Generic(event.GenericEvent) bool { return false }

// Update passes a change of data of an object that matches before or
// after.
func (p ConfigChanged) Update(e event.UpdateEvent) bool {
	if !p.Selector.Matches(labels.Set(e.ObjectNew.GetLabels())) && !p.Selector.Matches(labels.Set(e.ObjectOld.GetLabels())) {
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
