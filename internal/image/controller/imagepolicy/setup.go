package imagepolicy

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// repositoryIndex is the field index on ImagePolicies holding the
// namespace/name of their ImageRepository.
const repositoryIndex = ".spec.imageRepositoryRef"

// SetupWithManager registers the index and the reconciler: a policy is
// reconciled on spec changes, reconcile requests, and whenever its
// ImageRepository appears, goes away or scans a new tag list.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts reconcile.SetupOptions) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &imagev1.ImagePolicy{}, repositoryIndex, indexRepository); err != nil {
		return fmt.Errorf("indexing ImagePolicies by ImageRepository: %w", err)
	}
	c := mgr.GetClient()
	policies := func(ctx context.Context, o client.Object) []crreconcile.Request {
		return reconcile.Lookup(ctx, c, func() client.ObjectList { return &imagev1.ImagePolicyList{} },
			repositoryIndex, o.GetNamespace()+"/"+o.GetName())
	}
	return reconcile.Setup(mgr, &imagev1.ImagePolicy{}, r, opts, reconcile.Watch{
		Object:     &imagev1.ImageRepository{},
		Handler:    handler.EnqueueRequestsFromMapFunc(policies),
		Predicates: []predicate.Predicate{scanChanged{}},
	})
}

func indexRepository(o client.Object) []string {
	p := o.(*imagev1.ImagePolicy)
	ns := p.Spec.ImageRepositoryRef.Namespace
	if ns == "" {
		ns = p.Namespace
	}
	return []string{ns + "/" + p.Spec.ImageRepositoryRef.Name}
}

// scanChanged passes an ImageRepository update whose scan revision
// changed (or first appeared), and every create and delete.
type scanChanged struct{ predicate.Funcs }

func (scanChanged) Update(e event.UpdateEvent) bool {
	oldRepo, ok1 := e.ObjectOld.(*imagev1.ImageRepository)
	newRepo, ok2 := e.ObjectNew.(*imagev1.ImageRepository)
	if !ok1 || !ok2 || newRepo.Status.LastScanResult == nil {
		return false
	}
	return oldRepo.Status.LastScanResult == nil || oldRepo.Status.LastScanResult.Revision != newRepo.Status.LastScanResult.Revision
}
