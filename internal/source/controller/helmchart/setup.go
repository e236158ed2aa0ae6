package helmchart

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// Index keys.
const (
	// sourceIndex on HelmCharts holds "<Kind>/<namespace>/<name>" of
	// spec.sourceRef.
	sourceIndex = ".spec.sourceRef"
	// urlIndex on HelmRepositories holds the normalised spec.url, to find
	// the repository (and credentials) of a chart dependency.
	urlIndex = ".spec.url"
)

// SetupOptions tunes the controller's work queue.
type SetupOptions = reconcile.SetupOptions

// sourceObject is a source object with an artifact.
type sourceObject = sourcev1.Object

// SetupWithManager registers the reconciler, its indexes, and watches on
// the three source kinds so that a new source artifact reaches the
// HelmCharts built from it at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts SetupOptions) error {
	r.defaults()
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &sourcev1.HelmChart{}, sourceIndex, func(o client.Object) []string {
		return []string{sourceKey(o.(*sourcev1.HelmChart))}
	}); err != nil {
		return fmt.Errorf("indexing HelmCharts by source: %w", err)
	}
	if err := idx.IndexField(ctx, &sourcev1.HelmRepository{}, urlIndex, func(o client.Object) []string {
		if u := normalizeURL(o.(*sourcev1.HelmRepository).Spec.URL); u != "" {
			return []string{u}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing HelmRepositories by URL: %w", err)
	}
	var watches []reconcile.Watch
	for kind, obj := range map[string]sourceObject{
		sourcev1.HelmRepositoryKind: &sourcev1.HelmRepository{},
		sourcev1.GitRepositoryKind:  &sourcev1.GitRepository{},
		sourcev1.BucketKind:         &sourcev1.Bucket{},
	} {
		watches = append(watches, reconcile.Watch{
			Object:     obj,
			Handler:    handler.EnqueueRequestsFromMapFunc(r.chartsOf(kind)),
			Predicates: []predicate.Predicate{reconcile.ArtifactChanged{}},
		})
	}
	return reconcile.Setup(mgr, &sourcev1.HelmChart{}, r, opts, watches...)
}

func sourceKey(hc *sourcev1.HelmChart) string {
	return hc.Spec.SourceRef.Kind + "/" + hc.Namespace + "/" + hc.Spec.SourceRef.Name
}

// chartsOf maps a source of kind to the HelmCharts built from it that have
// not seen its current artifact.
func (r *Reconciler) chartsOf(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []crreconcile.Request {
		src, ok := o.(sourceObject)
		if !ok || src.GetArtifact() == nil {
			return nil
		}
		var list sourcev1.HelmChartList
		key := kind + "/" + o.GetNamespace() + "/" + o.GetName()
		if err := r.Client.List(ctx, &list, client.MatchingFields{sourceIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing HelmCharts", "source", key)
			return nil
		}
		var reqs []crreconcile.Request
		for _, hc := range list.Items {
			if !meta.SameRevision(src.GetArtifact().Revision, hc.Status.ObservedSourceArtifactRevision) {
				reqs = append(reqs, crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: hc.Namespace, Name: hc.Name}})
			}
		}
		return reqs
	}
}

// normalizeURL is how a dependency's repository URL is matched to a
// HelmRepository's spec.url: scheme and host in lower case, no trailing
// slash, no query or fragment.
func normalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), strings.TrimRight(u.RawPath, "/")
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
