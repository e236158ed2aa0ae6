package livediff

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/inventory"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// Kustomization compares objects, rendered for the Kustomization key (which
// need not exist yet), with the cluster: each labelled as the controller
// labels what it applies and dry-run as kustomize-controller; then, when
// the Kustomization prunes, the objects of its inventory the render no
// longer has. On an error the Result holds what was found before it.
func Kustomization(ctx context.Context, c client.Client, key client.ObjectKey, objects []*unstructured.Unstructured) (*Result, error) {
	owner := ssa.Owner{Name: key.Name, Namespace: key.Namespace}
	labelled := make([]*unstructured.Unstructured, 0, len(objects))
	for _, o := range objects {
		o = o.DeepCopy()
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, owner.Labels())
		o.SetLabels(labels)
		labelled = append(labelled, o)
	}
	res := &Result{}
	built, err := res.dryRun(ctx, c, labelled, meta.KustomizeControllerManager)
	if err != nil {
		return res, err
	}
	pruned, err := prunes(ctx, c, key, built)
	if err != nil {
		return res, err
	}
	res.deleted(pruned)
	return res, nil
}

// prunes lists the objects the Kustomization's inventory holds that the
// build does not: the controller would delete them (spec.prune).
func prunes(ctx context.Context, c client.Client, key client.ObjectKey, built map[ssa.ObjMetadata]bool) ([]string, error) {
	var k kustomizev1.Kustomization
	if err := c.Get(ctx, key, &k); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Kustomization %s: %w", key, err)
	}
	if !k.Spec.Prune || k.Status.Inventory == nil {
		return nil, nil
	}
	ids, err := inventory.List(*k.Status.Inventory)
	if err != nil {
		return nil, errors.Join(errors.New("reading the inventory"), err)
	}
	var out []string
	for _, id := range ids {
		if !built[id] {
			out = append(out, id.String())
		}
	}
	sort.Strings(out)
	return out, nil
}
