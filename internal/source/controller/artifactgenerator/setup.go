package artifactgenerator

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// SetupOptions tunes the controller's work queue.
type SetupOptions = reconcile.SetupOptions

// sourceIndex indexes ArtifactGenerators by "<kind>/<namespace>/<name>" of
// each of their sources.
const sourceIndex = ".spec.sources"

// SetupWithManager registers the reconciler and its watches: a source of
// any allowed kind with a new artifact reaches the generators reading it
// at once, and a generated ExternalArtifact deleted by hand reaches its
// generator, which puts it back.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts SetupOptions) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &sourceextensionsv1beta1.ArtifactGenerator{}, sourceIndex, sourceKeys); err != nil {
		return fmt.Errorf("indexing ArtifactGenerators by source: %w", err)
	}
	var watches []reconcile.Watch
	for kind, obj := range map[string]client.Object{
		sourcev1.GitRepositoryKind: &sourcev1.GitRepository{},
		sourcev1.OCIRepositoryKind: &sourcev1.OCIRepository{},
		sourcev1.BucketKind:        &sourcev1.Bucket{},
		sourcev1.HelmChartKind:     &sourcev1.HelmChart{},
	} {
		watches = append(watches, reconcile.Watch{
			Object:     obj,
			Handler:    handler.EnqueueRequestsFromMapFunc(r.readersOf(kind)),
			Predicates: []predicate.Predicate{reconcile.ArtifactChanged{}},
		})
	}
	watches = append(watches, reconcile.Watch{Object: &sourcev1.ExternalArtifact{}, Handler: r.externalArtifactEvents()})
	return reconcile.Setup(mgr, &sourceextensionsv1beta1.ArtifactGenerator{}, r, opts, watches...)
}

func sourceKeys(o client.Object) []string {
	ag := o.(*sourceextensionsv1beta1.ArtifactGenerator)
	keys := make([]string, 0, len(ag.Spec.Sources))
	for _, s := range ag.Spec.Sources {
		ns := s.Namespace
		if ns == "" {
			ns = ag.Namespace
		}
		keys = append(keys, s.Kind+"/"+ns+"/"+s.Name)
	}
	return keys
}

// readersOf maps a source of kind to the generators that read it.
func (r *Reconciler) readersOf(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []crreconcile.Request {
		var list sourceextensionsv1beta1.ArtifactGeneratorList
		key := kind + "/" + o.GetNamespace() + "/" + o.GetName()
		if err := r.Client.List(ctx, &list, client.MatchingFields{sourceIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing ArtifactGenerators of a source", "source", key)
			return nil
		}
		reqs := make([]crreconcile.Request, 0, len(list.Items))
		for _, ag := range list.Items {
			reqs = append(reqs, crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ag.Namespace, Name: ag.Name}})
		}
		return reqs
	}
}

// externalArtifactEvents maps ExternalArtifact events: a new artifact
// reaches the generators that read it as a source, and the deletion of a
// generated one reaches the generator that made it.
func (r *Reconciler) externalArtifactEvents() handler.EventHandler {
	readers := r.readersOf(sourcev1.ExternalArtifactKind)
	changed := reconcile.ArtifactChanged{}
	type queue = workqueue.TypedRateLimitingInterface[crreconcile.Request]
	add := func(q queue, reqs []crreconcile.Request) {
		for _, req := range reqs {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			add(q, readers(ctx, e.Object))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			if changed.Update(e) {
				add(q, readers(ctx, e.ObjectNew))
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			add(q, ownerOf(e.Object))
		},
	}
}

// ownerOf maps a generated ExternalArtifact to its generator.
func ownerOf(o client.Object) []crreconcile.Request {
	ea, ok := o.(*sourcev1.ExternalArtifact)
	if !ok || ea.Spec.SourceRef == nil || ea.Spec.SourceRef.Kind != sourceextensionsv1beta1.ArtifactGeneratorKind {
		return nil
	}
	if _, generated := ea.Labels[sourceextensionsv1beta1.GeneratorLabel]; !generated {
		return nil
	}
	ns := ea.Spec.SourceRef.Namespace
	if ns == "" {
		ns = ea.Namespace
	}
	return []crreconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: ea.Spec.SourceRef.Name}}}
}
