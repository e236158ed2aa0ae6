package helmrelease

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// chartRefIndex holds "<Kind>/<namespace>/<name>" of spec.chartRef, or of
// the HelmChart made from spec.chart.
const chartRefIndex = ".spec.chartRef"

// SetupOptions tunes the controller's work queue.
type SetupOptions = reconcile.SetupOptions

// SetupWithManager registers the reconciler, the chartRef index and the
// watches that make a HelmRelease follow its chart's artifact at once.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts SetupOptions) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &helmv2.HelmRelease{}, chartRefIndex, func(o client.Object) []string {
		hr := o.(*helmv2.HelmRelease)
		switch {
		case hr.Spec.ChartRef != nil:
			return []string{hr.Spec.ChartRef.Kind + "/" + chartRefKey(hr).String()}
		case hr.Spec.Chart != nil:
			return []string{sourcev1.HelmChartKind + "/" + chartTemplateKey(hr).String()}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing HelmReleases by chartRef: %w", err)
	}
	sources := map[string]Source{
		sourcev1.HelmChartKind:     &sourcev1.HelmChart{},
		sourcev1.OCIRepositoryKind: &sourcev1.OCIRepository{},
	}
	if r.Options.AllowExternalArtifact {
		sources[sourcev1.ExternalArtifactKind] = &sourcev1.ExternalArtifact{}
	}
	watches := make([]reconcile.Watch, 0, len(sources))
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
		key := kind + "/" + types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()
		var list helmv2.HelmReleaseList
		if err := r.Client.List(ctx, &list, client.MatchingFields{chartRefIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing HelmReleases", "chartRef", key)
			return nil
		}
		reqs := make([]crreconcile.Request, 0, len(list.Items))
		for _, hr := range list.Items {
			reqs = append(reqs, crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: hr.Namespace, Name: hr.Name}})
		}
		return reqs
	}
}
