package kustomization

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// Index keys on Kustomizations.
const (
	// sourceIndex holds "<Kind>/<namespace>/<name>" of spec.sourceRef.
	sourceIndex = ".spec.sourceRef"
	// dependsOnIndex holds "<namespace>/<name>" of each spec.dependsOn.
	dependsOnIndex = ".spec.dependsOn"
)

// SetupOptions tunes the controller's work queue.
type SetupOptions = reconcile.SetupOptions

// SetupWithManager registers the reconciler, the indexes it looks
// dependents up with, and the watches that make a Kustomization follow its
// source and its dependencies at once.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts SetupOptions) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &kustomizev1.Kustomization{}, sourceIndex, func(o client.Object) []string {
		k := o.(*kustomizev1.Kustomization)
		return []string{k.Spec.SourceRef.Kind + "/" + sourceKey(k).String()}
	}); err != nil {
		return fmt.Errorf("indexing Kustomizations by source: %w", err)
	}
	if err := idx.IndexField(ctx, &kustomizev1.Kustomization{}, dependsOnIndex, func(o client.Object) []string {
		k := o.(*kustomizev1.Kustomization)
		keys := make([]string, 0, len(k.Spec.DependsOn))
		for _, ref := range k.Spec.DependsOn {
			keys = append(keys, dependencyKey(k, ref).String())
		}
		return keys
	}); err != nil {
		return fmt.Errorf("indexing Kustomizations by dependency: %w", err)
	}

	if r.Options.ConfigsSelector != nil || r.Options.FollowProducedConfigs {
		if err := idx.IndexField(ctx, &kustomizev1.Kustomization{}, configIndex, configRefs); err != nil {
			return fmt.Errorf("indexing Kustomizations by ConfigMap and Secret: %w", err)
		}
	}

	watches := []reconcile.Watch{{
		Object:     &kustomizev1.Kustomization{},
		Handler:    handler.EnqueueRequestsFromMapFunc(r.dependents),
		Predicates: []predicate.Predicate{dependencyChanged{}},
	}}
	sources := []Source{&sourcev1.GitRepository{}, &sourcev1.OCIRepository{}, &sourcev1.Bucket{}}
	if r.Options.AllowExternalArtifact {
		sources = append(sources, &sourcev1.ExternalArtifact{})
	}
	for _, src := range sources {
		kind := kindOf(src)
		watches = append(watches, reconcile.Watch{
			Object:     src,
			Handler:    handler.EnqueueRequestsFromMapFunc(r.builtFrom(kind)),
			Predicates: []predicate.Predicate{reconcile.ArtifactChanged{}},
		})
	}
	if r.Options.ConfigsSelector != nil {
		watches = append(watches, r.configWatches(r.Options.ConfigsSelector)...)
	}
	if r.Options.FollowProducedConfigs {
		followers, err := r.followerWatches(mgr)
		if err != nil {
			return err
		}
		watches = append(watches, followers...)
	}
	return reconcile.Setup(mgr, &kustomizev1.Kustomization{}, r, opts, watches...)
}

func kindOf(src Source) string {
	switch src.(type) {
	case *sourcev1.GitRepository:
		return sourcev1.GitRepositoryKind
	case *sourcev1.OCIRepository:
		return sourcev1.OCIRepositoryKind
	case *sourcev1.Bucket:
		return sourcev1.BucketKind
	default:
		return sourcev1.ExternalArtifactKind
	}
}

// dependents maps a Kustomization to the Kustomizations whose dependsOn
// names it.
func (r *Reconciler) dependents(ctx context.Context, o client.Object) []crreconcile.Request {
	key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
	return r.lookup(ctx, dependsOnIndex, key)
}

// builtFrom maps a source of kind to the Kustomizations built from it.
func (r *Reconciler) builtFrom(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []crreconcile.Request {
		key := kind + "/" + types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
		return r.lookup(ctx, sourceIndex, key)
	}
}

func (r *Reconciler) lookup(ctx context.Context, index, key string) []crreconcile.Request {
	var list kustomizev1.KustomizationList
	if err := r.Client.List(ctx, &list, client.MatchingFields{index: key}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Kustomizations", "index", index, "key", key)
		return nil
	}
	reqs := make([]crreconcile.Request, 0, len(list.Items))
	for _, k := range list.Items {
		reqs = append(reqs, crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: k.Namespace, Name: k.Name}})
	}
	return reqs
}

// dependencyChanged passes the Kustomization events a dependent cares
// about: creation, deletion, and a status change of readiness or applied
// revision.
type dependencyChanged struct{ predicate.Funcs }

func (dependencyChanged) Create(event.CreateEvent) bool   { return true }
func (dependencyChanged) Delete(event.DeleteEvent) bool   { return true }
func (dependencyChanged) Generic(event.GenericEvent) bool { return false }
func (dependencyChanged) Update(e event.UpdateEvent) bool {
	older, ok1 := e.ObjectOld.(*kustomizev1.Kustomization)
	newer, ok2 := e.ObjectNew.(*kustomizev1.Kustomization)
	if !ok1 || !ok2 {
		return false
	}
	// A dependency that only reports the progress of a run (Ready Unknown
	// while Reconciling) has nothing new for a dependent yet: its result
	// comes with the patch that ends the run.
	return readinessOf(older) != readinessOf(newer) && !inProgress(newer)
}

// inProgress reports whether k is in the middle of a reconcile: Reconciling
// True with reason Progressing, as reconcile.Progress leaves it.
func inProgress(k *kustomizev1.Kustomization) bool {
	c := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReconcilingCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == meta.ProgressingReason
}

// readiness is what a dependent's check reads from a dependency.
type readiness struct {
	generation, observed int64
	ready                string
	revision             string
}

func readinessOf(k *kustomizev1.Kustomization) readiness {
	r := readiness{generation: k.Generation, observed: k.Status.ObservedGeneration, revision: k.Status.LastAppliedRevision}
	if c := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition); c != nil {
		r.ready = string(c.Status)
	}
	return r
}
