package ssa

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PruneOptions configures Prune.
type PruneOptions struct {
	// Owner is the Kustomization pruning. When set, only objects whose
	// owner labels name it are deleted: an object another Kustomization
	// has taken over, or one without the labels, is skipped. Flux always
	// sets it.
	Owner *Owner
	// PropagationPolicy of the deletes. Default Background, as Flux.
	PropagationPolicy metav1.DeletionPropagation
}

// Prune deletes objects in the reverse of the order Apply writes them in
// (workloads before the namespaces and definitions they live in), and
// reports each as deleted or skipped. Objects annotated or labelled
// kustomize.toolkit.fluxcd.io/prune: Disabled or
// kustomize.toolkit.fluxcd.io/reconcile: disabled in the cluster are
// skipped. An object already gone, or whose kind is no longer served
// (its CRD was deleted, taking it along), counts as deleted. A failure on
// one object does not stop the others; Prune returns all failures joined.
func (m *Manager) Prune(ctx context.Context, objects []ObjMetadata, opts PruneOptions) (*ChangeSet, error) {
	if opts.PropagationPolicy == "" {
		opts.PropagationPolicy = metav1.DeletePropagationBackground
	}
	ordered := slices.Clone(objects)
	SortInApplyOrder(ordered)
	slices.Reverse(ordered)
	ordered = slices.Compact(ordered)

	entries := make([]ChangeSetEntry, len(ordered))
	var errs []error
	for start := 0; start < len(ordered); {
		end := start + 1
		for end < len(ordered) && ordered[end].GroupKind == ordered[start].GroupKind {
			end++
		}
		run := ordered[start:end]
		if err := forEach(ctx, len(run), m.concurrency, func(ctx context.Context, i int) error {
			var err error
			entries[start+i], err = m.prune(ctx, run[i], opts)
			return err
		}); err != nil {
			errs = append(errs, err)
		}
		start = end
	}
	cs := &ChangeSet{}
	for _, e := range entries {
		if e.Action != "" {
			cs.Entries = append(cs.Entries, e)
		}
	}
	if len(errs) > 0 {
		return cs, fmt.Errorf("prune failed: %w", errors.Join(errs...))
	}
	return cs, nil
}

// prune deletes one object unless its metadata protects it. The returned
// entry is empty when the object's fate is unknown because of an error.
func (m *Manager) prune(ctx context.Context, id ObjMetadata, opts PruneOptions) (ChangeSetEntry, error) {
	entry := ChangeSetEntry{ObjMetadata: id, Action: Deleted}
	obj, err := m.get(ctx, m.client, id)
	switch {
	case apierrors.IsNotFound(err) || isNoMatch(err):
		return entry, nil
	case err != nil:
		return ChangeSetEntry{}, fmt.Errorf("%s: reading the object: %w", id, err)
	}
	entry.Version = obj.GroupVersionKind().Version
	if protected(obj, opts.Owner) {
		entry.Action = Skipped
		return entry, nil
	}
	uid := obj.GetUID()
	err = m.client.Delete(ctx, obj, client.PropagationPolicy(opts.PropagationPolicy), client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) {
		return ChangeSetEntry{}, fmt.Errorf("%s delete failed: %w", id, err)
	}
	return entry, nil
}

// protected reports whether Prune must keep obj.
func protected(obj *unstructured.Unstructured, owner *Owner) bool {
	return KeptByPrune(obj) || (owner != nil && !owner.owns(obj))
}

func isNoMatch(err error) bool { return apimeta.IsNoMatchError(err) }
