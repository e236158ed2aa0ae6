package receiver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
)

// groupOfKind is the API group of each kind spec.resources may name, used
// when apiVersion is left out; the version is then the one the API server
// prefers.
var groupOfKind = map[string]string{
	"Bucket":                "source.toolkit.fluxcd.io",
	"GitRepository":         "source.toolkit.fluxcd.io",
	"OCIRepository":         "source.toolkit.fluxcd.io",
	"HelmRepository":        "source.toolkit.fluxcd.io",
	"HelmChart":             "source.toolkit.fluxcd.io",
	"ExternalArtifact":      "source.toolkit.fluxcd.io",
	"ArtifactGenerator":     "source.extensions.fluxcd.io",
	"Kustomization":         "kustomize.toolkit.fluxcd.io",
	"HelmRelease":           "helm.toolkit.fluxcd.io",
	"ImageRepository":       "image.toolkit.fluxcd.io",
	"ImagePolicy":           "image.toolkit.fluxcd.io",
	"ImageUpdateAutomation": "image.toolkit.fluxcd.io",
}

// annotator asks objects to reconcile by setting
// reconcile.fluxcd.io/requestedAt, the way `flux reconcile` does.
type annotator struct {
	client  client.Client
	now     time.Time
	noCross bool
	// body is the request body for filters, decoded once.
	body map[string]any
	// claims are the verified token claims for filters (generic-oidc).
	claims map[string]any
}

// notify requests a reconcile of every object res selects for the
// Receiver obj, and returns how many were annotated.
func (a *annotator) notify(ctx context.Context, obj *notificationv1.Receiver, res notificationv1.ReceiverResource) (int, error) {
	ref := res.CrossNamespaceObjectReference
	if err := checkResource(obj.Namespace, ref, a.noCross); err != nil {
		return 0, err
	}
	filters, err := compileFilters(obj.Spec.ResourceFilter, res.Filter)
	if err != nil {
		return 0, err
	}
	gvk, err := a.kindOf(ref)
	if err != nil {
		return 0, err
	}
	ns := ref.Namespace
	if ns == "" {
		ns = obj.Namespace
	}
	if ref.Name != "*" {
		return a.notifyNamed(ctx, gvk, ns, ref.Name, filters)
	}
	if ns == "*" {
		ns = "" // every namespace
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := a.client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(ref.MatchLabels)); err != nil {
		return 0, fmt.Errorf("failed listing %s in namespace %q by matching labels %v: %w", gvk.Kind, ns, ref.MatchLabels, err)
	}
	n := 0
	for i := range list.Items {
		ok, err := a.annotate(ctx, &list.Items[i], filters)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (a *annotator) notifyNamed(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, filters []*filter) (int, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	if len(filters) > 0 {
		// Filters need the object; without them the patch alone tells
		// whether it exists.
		if err := a.client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return 0, fmt.Errorf("unable to read %s '%s/%s' error: %w", gvk.Kind, ns, name, err)
		}
	}
	ok, err := a.annotate(ctx, u, filters)
	if err != nil || !ok {
		return 0, err
	}
	return 1, nil
}

// annotate patches u's request annotation when every filter accepts it,
// and reports whether it did.
func (a *annotator) annotate(ctx context.Context, u *unstructured.Unstructured, filters []*filter) (bool, error) {
	for _, f := range filters {
		ok, err := f.accept(ctx, u.Object, a.body, a.claims)
		if err != nil {
			return false, fmt.Errorf("filtering %s '%s/%s': %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		if !ok {
			return false, nil
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		meta.ReconcileRequestAnnotation: meta.NewReconcileRequestToken(a.now),
	}}})
	if err != nil {
		return false, err
	}
	if err := a.client.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(ControllerName)); err != nil {
		return false, fmt.Errorf("unable to annotate %s '%s/%s' error: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return true, nil
}

// kindOf resolves a reference's group, version and kind.
func (a *annotator) kindOf(ref notificationv1.CrossNamespaceObjectReference) (schema.GroupVersionKind, error) {
	if ref.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return schema.GroupVersionKind{}, fmt.Errorf("invalid apiVersion '%s': %w", ref.APIVersion, err)
		}
		return gv.WithKind(ref.Kind), nil
	}
	group, ok := groupOfKind[ref.Kind]
	if !ok {
		return schema.GroupVersionKind{}, fmt.Errorf("apiVersion must be specified for kind '%s'", ref.Kind)
	}
	m, err := a.client.RESTMapper().RESTMapping(schema.GroupKind{Group: group, Kind: ref.Kind})
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("finding the served version of %s.%s: %w", ref.Kind, group, err)
	}
	return m.GroupVersionKind, nil
}

// compileFilters compiles the Receiver-wide and the per-resource filter,
// skipping empty ones.
func compileFilters(exprs ...string) ([]*filter, error) {
	var out []*filter
	for _, e := range exprs {
		if e == "" {
			continue
		}
		f, err := compileFilter(e)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
