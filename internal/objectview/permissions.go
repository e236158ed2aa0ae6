package objectview

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/kinds"
)

// Perm says whether the user may do an action, and if not, why.
type Perm struct {
	Allowed bool `json:"allowed"`
	// Reason names the verb and resource refused: "alice cannot patch
	// kustomizations.kustomize.toolkit.fluxcd.io in namespace apps"; ""
	// when allowed.
	Reason string `json:"reason"`
}

// Perms are the object page's actions. Reconcile, suspend and
// resume patch the object; ReconcileSource patches its source too (for a
// HelmRelease from spec.chart, the HelmChart the controller made as well).
type Perms struct {
	Reconcile       Perm `json:"reconcile"`
	Suspend         Perm `json:"suspend"`
	Resume          Perm `json:"resume"`
	ReconcileSource Perm `json:"reconcileSource"`
}

// Permissions asks the API server, with SelfSubjectAccessReviews made as
// the caller (c), whether the caller may patch the object ref names and
// its sources. user names the caller in the reasons.
func Permissions(ctx context.Context, c client.Client, ref Ref, user string) (*Perms, error) {
	k, u, err := read(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	self, err := canPatch(ctx, c, k.GVK(), ref.Namespace, ref.Name, user)
	if err != nil {
		return nil, err
	}
	out := &Perms{Reconcile: self, Suspend: self, Resume: self, ReconcileSource: self}
	if !self.Allowed {
		return out, nil
	}
	sources := sourcesOf(k, u)
	if len(sources) == 0 {
		out.ReconcileSource = Perm{Reason: fmt.Sprintf("%s %s has no source to reconcile", k.Kind, ref.Name)}
	}
	for _, s := range sources {
		sk, err := resolve(s)
		if err != nil {
			out.ReconcileSource = Perm{Reason: fmt.Sprintf("%s %s: source kind %q is not supported", k.Kind, ref.Name, s.Kind)}
			break
		}
		p, err := canPatch(ctx, c, sk.GVK(), s.Namespace, s.Name, user)
		if err != nil {
			return nil, err
		}
		if !p.Allowed {
			out.ReconcileSource = p
			break
		}
	}
	return out, nil
}

// sourcesOf lists what reconcile-source reconciles, as `reconcile
// --with-source` does: the source, and for a HelmRelease from spec.chart
// the HelmChart the controller made from it.
func sourcesOf(k kinds.Kind, u *unstructured.Unstructured) []Ref {
	src := sourceRef(k, u)
	if src == nil {
		return nil
	}
	out := []Ref{*src}
	if chart, _, _ := unstructured.NestedMap(u.Object, "spec", "chart"); k.Kind == kinds.HelmRelease.Kind && chart != nil {
		out = append(out, Ref{Kind: kinds.HelmChart.Kind, Namespace: src.Namespace, Name: u.GetNamespace() + "-" + u.GetName()})
	}
	return out
}

// canPatch asks whether the caller may patch the object.
func canPatch(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name, user string) (Perm, error) {
	m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return Perm{}, fmt.Errorf("mapping %s: %w", gvk.Kind, err)
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: "patch", Group: gvk.Group, Resource: m.Resource.Resource, Name: name,
		},
	}}
	if err := c.Create(ctx, review); err != nil {
		return Perm{}, fmt.Errorf("asking whether %s may patch %s %s/%s: %w", user, gvk.Kind, ns, name, err)
	}
	if review.Status.Allowed {
		return Perm{Allowed: true}, nil
	}
	return Perm{Reason: fmt.Sprintf("%s cannot patch %s in namespace %s", user, m.Resource.GroupResource(), ns)}, nil
}
