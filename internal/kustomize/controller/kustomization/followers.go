package kustomization

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// Substitution followers (docs/design/0006-substitution-followers.md): a
// ConfigMap or Secret that a Kustomization applied carries the owner
// labels weir's apply sets. When one changes, the Kustomizations that read
// it (spec.postBuild.substituteFrom, spec.decryption.secretRef) are queued
// at once, without the reconcile.fluxcd.io/watch label. The watch is
// metadata-only and goes through a cache of its own that holds nothing but
// labelled objects, reduced to their identity: no Secret data and no
// unrelated ConfigMap or Secret is ever held.

// producedSelector matches the objects some Kustomization applied.
func producedSelector() labels.Selector {
	name, err := labels.NewRequirement(kustomizev1.NameLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant label key
	}
	ns, err := labels.NewRequirement(kustomizev1.NamespaceLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*name, *ns)
}

// followerWatches creates the metadata-only cache of produced ConfigMaps
// and Secrets, adds it to mgr (which starts it with the controller), and
// returns the watches that map a change to the Kustomizations reading the
// object.
func (r *Reconciler) followerWatches(mgr ctrl.Manager) ([]reconcile.Watch, error) {
	opts := cache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: producedSelector(),
		DefaultTransform:     ownerMetadata,
	}
	if ns := r.Options.WatchNamespace; ns != "" {
		opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("creating the cache of applied ConfigMaps and Secrets: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding the cache of applied ConfigMaps and Secrets: %w", err)
	}
	watch := func(kind string) reconcile.Watch {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
		return reconcile.Watch{Source: source.Kind(c, obj,
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o *metav1.PartialObjectMetadata) []crreconcile.Request {
				return r.lookup(ctx, configIndex, reconcile.RefKey(kind, o.Namespace, o.Name))
			}),
			producedChanged{},
		)}
	}
	return []reconcile.Watch{watch("ConfigMap"), watch("Secret")}, nil
}

// ownerMetadata is the cache's transform: it keeps what the watch reads
// (name, namespace, uid, resourceVersion, deletion) and drops the rest
// (labels, annotations, managed fields) before the object is stored, so
// that each cached object costs a few small strings. The labels are not
// needed once the object is in: the API server filters by them (an object
// that loses one is deleted from the cache), and the watch maps an object
// to its readers by name. The type strings are the package's constants,
// not one copy per object.
func ownerMetadata(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: canonicalTypeMeta(m.TypeMeta), ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		DeletionTimestamp: m.DeletionTimestamp,
	}}, nil
}

// followedTypes are the type strings of the kinds the followers watch.
var followedTypes = []metav1.TypeMeta{
	{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "ConfigMap"},
	{APIVersion: corev1.SchemeGroupVersion.String(), Kind: "Secret"},
}

func canonicalTypeMeta(t metav1.TypeMeta) metav1.TypeMeta {
	for _, c := range followedTypes {
		if c == t {
			return c
		}
	}
	return t
}

// producedChanged passes creations, deletions and writes of produced
// objects. A metadata-only watch cannot tell a data change from a label
// change; both are rare, and a needless reconcile of a consumer rebuilds
// from the build cache. The informer's periodic resync, which delivers an
// object unchanged, is dropped.
type producedChanged struct {
	predicate.TypedFuncs[*metav1.PartialObjectMetadata]
}

func (producedChanged) Generic(event.TypedGenericEvent[*metav1.PartialObjectMetadata]) bool {
	return false
}

func (producedChanged) Update(e event.TypedUpdateEvent[*metav1.PartialObjectMetadata]) bool {
	return e.ObjectOld.ResourceVersion != e.ObjectNew.ResourceVersion
}
