package helmrelease

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	helmchart "github.com/weir-gitops/weir/internal/source/chart"
)

// chartRefIndex holds "<Kind>/<namespace>/<name>" of spec.chartRef, or of
// the HelmChart made from spec.chart.
const chartRefIndex = ".spec.chartRef"

// SetupOptions tunes the controller's work queue.
type SetupOptions = reconcile.SetupOptions

// SetupWithManager registers the reconciler, its indexes and the watches
// that make a HelmRelease follow at once its chart's artifact, its
// dependencies and its labelled valuesFrom objects.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts SetupOptions) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &helmv2.HelmRelease{}, chartRefIndex, func(o client.Object) []string {
		if kind, key, ok := helmchart.SourceOf(o.(*helmv2.HelmRelease)); ok {
			return []string{kind + "/" + key.String()}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing HelmReleases by chartRef: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &helmv2.HelmRelease{}, dependency.Index, dependency.IndexKeys); err != nil {
		return fmt.Errorf("indexing HelmReleases by dependency: %w", err)
	}
	if r.Options.ConfigsSelector != nil {
		if err := mgr.GetFieldIndexer().IndexField(ctx, &helmv2.HelmRelease{}, valuesIndex, valuesRefs); err != nil {
			return fmt.Errorf("indexing HelmReleases by valuesFrom: %w", err)
		}
	}
	sources := map[string]Source{
		sourcev1.HelmChartKind:     &sourcev1.HelmChart{},
		sourcev1.OCIRepositoryKind: &sourcev1.OCIRepository{},
	}
	if r.Options.AllowExternalArtifact {
		sources[sourcev1.ExternalArtifactKind] = &sourcev1.ExternalArtifact{}
	}
	watches := []reconcile.Watch{dependencies.Watch(r.Client)}
	if r.Health != nil {
		watches = append(watches, reconcile.Watch{Source: r.Health.Source()})
	}
	if r.Options.ConfigsSelector != nil {
		watches = append(watches, r.configWatches()...)
	}
	for _, kind := range []string{sourcev1.HelmChartKind, sourcev1.OCIRepositoryKind, sourcev1.ExternalArtifactKind} {
		src, ok := sources[kind]
		if !ok {
			continue
		}
		watches = append(watches, reconcile.Watch{
			Object:     src,
			Handler:    handler.EnqueueRequestsFromMapFunc(r.usersOf(kind)),
			Predicates: []predicate.Predicate{reconcile.ArtifactChanged{}},
		})
	}
	return reconcile.Setup(mgr, &helmv2.HelmRelease{}, r, opts, watches...)
}

// usersOf maps a source of kind to the HelmReleases whose chartRef names it.
func (r *Reconciler) usersOf(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []crreconcile.Request {
		return reconcile.Lookup(ctx, r.Client, dependencies.NewList, chartRefIndex, reconcile.RefKey(kind, o.GetNamespace(), o.GetName()))
	}
}
