package objectview

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/view/kinds"
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
	if k.Kind == kinds.ExternalArtifact.Kind {
		// Nothing reconciles an ExternalArtifact, and it has no
		// spec.suspend: its producer is the one to act on.
		no := Perm{Reason: fmt.Sprintf("%s %s is written by its producer (spec.sourceRef), which is the one to reconcile or suspend",
			k.Kind, ref.Name)}
		return &Perms{Reconcile: no, Suspend: no, Resume: no, ReconcileSource: no}, nil
	}
	if sourceRef(k, u) == nil {
		out.ReconcileSource = Perm{Reason: fmt.Sprintf("%s %s has no source to reconcile", k.Kind, ref.Name)}
		return out, nil
	}
	// The sources the reconcile-source action patches (kinds.SourcesOf):
	// the same list, so the answer cannot differ from what the action does.
	sources, err := kinds.SourcesOf(u)
	if err != nil {
		out.ReconcileSource = Perm{Reason: err.Error()}
		return out, nil
	}
	for _, s := range sources {
		p, err := canPatch(ctx, c, s.Kind.GVK(), s.Namespace, s.Name, user)
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
