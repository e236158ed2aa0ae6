package dev

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/apply/inventory"
)

// objectState is one inventory object as kstatus reads it.
type objectState struct {
	// name is Kind/namespace/name (Kind/name for cluster-scoped objects).
	name string
	// current is kstatus's Current: the object's controller has observed
	// its latest generation and reached what its spec asks (a Deployment:
	// every replica updated and available).
	current bool
	// message is kstatus's message, such as "Updated: 2/3" for a
	// Deployment still rolling out, or "not found".
	message string
}

// objectStates reads every object of k's inventory and tells, for each,
// whether kstatus finds it Current. Kustomizations in the inventory are
// left out: converged checks them by their own conditions. So are the
// objects of a Kustomization that applies to another cluster
// (spec.kubeConfig), which this client cannot see.
func objectStates(ctx context.Context, c client.Reader, k *kustomizev1.Kustomization) ([]objectState, error) {
	if k.Status.Inventory == nil || k.Spec.KubeConfig != nil {
		return nil, nil
	}
	var out []objectState
	for _, e := range k.Status.Inventory.Entries {
		id, err := inventory.Parse(e.ID)
		if err != nil {
			return nil, fmt.Errorf("inventory of Kustomization %s: entry %q: %w", displayName(k), e.ID, err)
		}
		if id.GroupKind.Group == kustomizev1.GroupVersion.Group && id.GroupKind.Kind == kustomizev1.KustomizationKind {
			continue
		}
		name := id.GroupKind.Kind + "/" + id.Name
		if id.Namespace != "" {
			name = id.GroupKind.Kind + "/" + id.Namespace + "/" + id.Name
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: id.GroupKind.Group, Version: e.Version, Kind: id.GroupKind.Kind})
		if err := c.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, u); err != nil {
			if apierrors.IsNotFound(err) {
				out = append(out, objectState{name: name, message: "not found"})
				continue
			}
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		res, err := status.Compute(u)
		if err != nil {
			return nil, fmt.Errorf("computing the status of %s: %w", name, err)
		}
		out = append(out, objectState{name: name, current: res.Status == status.CurrentStatus, message: statusMessage(res)})
	}
	return out, nil
}

// statusMessage is kstatus's message, or its status when it has none.
func statusMessage(res *status.Result) string {
	if res.Message != "" {
		return res.Message
	}
	return res.Status.String()
}
