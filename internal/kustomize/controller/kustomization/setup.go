package kustomization

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/apply/healthwatch"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/kustomize/applymemo"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// Index keys on Kustomizations.
const (
	// sourceIndex holds "<Kind>/<namespace>/<name>" of spec.sourceRef.
	sourceIndex = ".spec.sourceRef"
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
	if err := idx.IndexField(ctx, &kustomizev1.Kustomization{}, dependency.Index, dependency.IndexKeys); err != nil {
		return fmt.Errorf("indexing Kustomizations by dependency: %w", err)
	}

	if r.Options.ConfigsSelector != nil || r.Options.FollowProducedConfigs {
		if err := idx.IndexField(ctx, &kustomizev1.Kustomization{}, configIndex, configRefs); err != nil {
			return fmt.Errorf("indexing Kustomizations by ConfigMap and Secret: %w", err)
		}
	}

	watches := []reconcile.Watch{dependencies.Watch(r.Client)}
	if r.Health != nil {
		watches = append(watches, reconcile.Watch{Source: r.Health.Source()})
	}
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
	if err := r.addMemoStore(mgr); err != nil {
		return err
	}
	// The extracted artifacts kept for the next builds go with the
	// controller.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.trees.Close()
		return nil
	})); err != nil {
		return fmt.Errorf("adding the artifact trees' cleanup: %w", err)
	}
	return reconcile.Setup(mgr, &kustomizev1.Kustomization{}, r, opts, watches...)
}

// addMemoStore keeps r's memos across restarts when Options name the
// Secrets (applymemo.Store).
func (r *Reconciler) addMemoStore(mgr ctrl.Manager) error {
	if r.Options.MemoNamespace == "" || r.Options.MemoName == "" {
		return nil
	}
	r.store = applymemo.NewStore(&r.memos, applymemo.StoreOptions{
		Namespace: r.Options.MemoNamespace, Name: r.Options.MemoName,
		Reader: r.APIReader, Writer: r.Client, FieldOwner: ControllerName,
		Kustomizations: mgr.GetCache(), Log: mgr.GetLogger().WithName("apply-memo"),
	})
	if err := mgr.Add(r.store); err != nil {
		return fmt.Errorf("adding the apply memo store: %w", err)
	}
	return nil
}

// WatchHealth makes health checks follow watches: a shared cache of the
// kinds being waited for, started by mgr, wakes a parked Kustomization
// when one of its objects changes (internal/apply/parked).
func (r *Reconciler) WatchHealth(mgr ctrl.Manager) error {
	overrides := r.Options.OverrideManagers
	c, err := healthwatch.NewCache(mgr.GetConfig(), mgr.GetRESTMapper(), func(o metav1.Object) string {
		return ssa.AppliedDigest(o, ControllerName, overrides)
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("adding the health check cache: %w", err)
	}
	r.Health = NewHealthWatcher(c, mgr.GetRESTMapper())
	return nil
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

// builtFrom maps a source of kind to the Kustomizations built from it.
func (r *Reconciler) builtFrom(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []crreconcile.Request {
		key := kind + "/" + types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
		return r.lookup(ctx, sourceIndex, key)
	}
}

func (r *Reconciler) lookup(ctx context.Context, index, key string) []crreconcile.Request {
	return reconcile.Lookup(ctx, r.Client, dependencies.NewList, index, key)
}
