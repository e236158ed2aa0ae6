package imageupdateautomation

import (
	"context"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// selector returns spec.policySelector as a label selector: everything
// when unset.
func selector(obj *imagev1.ImageUpdateAutomation) (labels.Selector, error) {
	if obj.Spec.PolicySelector == nil {
		return labels.Everything(), nil
	}
	s, err := metav1.LabelSelectorAsSelector(obj.Spec.PolicySelector)
	if err != nil {
		return nil, stalled(imagev1.InvalidPolicySelectorReason, "failed to parse policy selector: %w", err)
	}
	return s, nil
}

// policies lists the selected ImagePolicies of the automation's namespace
// that are Ready with a latest image: the others have nothing to write.
func (r *Reconciler) policies(ctx context.Context, obj *imagev1.ImageUpdateAutomation) ([]imagev1.ImagePolicy, error) {
	sel, err := selector(obj)
	if err != nil {
		return nil, err
	}
	var list imagev1.ImagePolicyList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, failed(meta.FailedReason, fmt.Errorf("failed to list policies: %w", err))
	}
	var out []imagev1.ImagePolicy
	for _, p := range list.Items {
		if usable(&p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// usable reports whether a policy has elected an image and stands by it.
func usable(p *imagev1.ImagePolicy) bool {
	return p.Status.LatestRef != nil && conditions.IsTrue(p, meta.ReadyCondition)
}

// observe returns status.observedPolicies for the policies.
func observe(policies []imagev1.ImagePolicy) imagev1.ObservedPolicies {
	out := imagev1.ObservedPolicies{}
	for _, p := range policies {
		out[p.Name] = *p.Status.LatestRef
	}
	return out
}

// samePolicies reports whether two observations hold the same images.
func samePolicies(a, b imagev1.ObservedPolicies) bool {
	return maps.Equal(a, b)
}
