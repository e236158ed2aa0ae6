package kustomization

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/inventory"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// deletesObjects reports whether deleting obj deletes what it applied, by
// spec.deletionPolicy. A suspended Kustomization, or one that never applied
// anything, deletes nothing.
func deletesObjects(obj *kustomizev1.Kustomization) bool {
	if obj.Spec.Suspend || obj.Status.Inventory == nil || len(obj.Status.Inventory.Entries) == 0 {
		return false
	}
	switch obj.GetDeletionPolicy() {
	case kustomizev1.DeletionPolicyMirrorPrune:
		return obj.Spec.Prune
	case kustomizev1.DeletionPolicyDelete, kustomizev1.DeletionPolicyWaitForTermination:
		return true
	default:
		return false
	}
}

// finalize deletes the inventory as spec.deletionPolicy says, then
// releases the finalizer. Objects another Kustomization has taken over, or
// annotated prune: Disabled, are left alone.
func (r *Reconciler) finalize(ctx context.Context, obj *kustomizev1.Kustomization) error {
	r.parkedWaits().Drop(keyOf(obj))
	if deletesObjects(obj) {
		objects, err := inventory.List(*obj.Status.Inventory)
		if err != nil {
			return fmt.Errorf("reading inventory: %w", err)
		}
		kube, err := r.Clients.For(ctx, obj)
		if err != nil {
			// The account to impersonate is gone: the objects cannot be
			// deleted as it; say which, and let the Kustomization go.
			r.Events.Warning(ctx, obj, meta.PruneFailedReason, nil, "unable to prune objects: %s", err)
		} else {
			mgr := ssa.NewManager(kube, ssa.Options{Concurrency: r.Options.ConcurrentSSA})
			cs, err := mgr.Prune(ctx, objects, ssa.PruneOptions{
				Owner:             &ssa.Owner{Name: obj.Name, Namespace: obj.Namespace},
				PropagationPolicy: metav1.DeletePropagationBackground,
			})
			if err != nil {
				r.Events.Warning(ctx, obj, meta.PruneFailedReason, nil, "pruning for deleted resource failed: %s", err)
				return err
			}
			if changes := cs.Changes(); changes != "" {
				r.Events.Normal(ctx, obj, meta.ProgressingReason, nil, "%s", changes)
			}
			if obj.GetDeletionPolicy() == kustomizev1.DeletionPolicyWaitForTermination {
				if err := r.waitForTermination(ctx, obj, kube, deleted(cs)); err != nil {
					ctrl.LoggerFrom(ctx).Error(err, "failed to wait for resources termination")
					r.Events.Warning(ctx, obj, meta.PruneFailedReason, nil, "failed to wait for resources termination: %s", err)
				}
			}
		}
	}
	r.builds().Forget(types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name})
	r.memos.Forget(types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name})
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	return nil
}

func deleted(cs *ssa.ChangeSet) []ssa.ObjMetadata {
	var out []ssa.ObjMetadata
	for _, e := range cs.Entries {
		if e.Action == ssa.Deleted {
			out = append(out, e.ObjMetadata)
		}
	}
	return out
}

// waitForTermination polls until every object is gone (finalizers run,
// garbage collection done) or spec.timeout passes (deadline.go).
func (r *Reconciler) waitForTermination(ctx context.Context, obj *kustomizev1.Kustomization, kube client.Client, objects []ssa.ObjMetadata) error {
	ctx, cancel := withDeadline(ctx, obj)
	defer cancel()
	remaining := objects
	for {
		var left []ssa.ObjMetadata
		for _, id := range remaining {
			mapping, err := kube.RESTMapper().RESTMapping(id.GroupKind)
			if err != nil {
				continue // kind gone with its definition: so is the object
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(mapping.GroupVersionKind)
			err = kube.Get(ctx, types.NamespacedName{Namespace: id.Namespace, Name: id.Name}, u)
			if err == nil || !apierrors.IsNotFound(err) {
				left = append(left, id)
			}
		}
		if len(left) == 0 {
			return nil
		}
		remaining = left
		select {
		case <-ctx.Done():
			return fmt.Errorf("timeout waiting for termination of %d objects, first %s", len(left), left[0])
		case <-time.After(time.Second):
		}
	}
}
