package fleetview

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/kinds"
)

// Fleet is every toolkit object one user may list, with the kinds that
// could not be listed and why.
type Fleet struct {
	Objects []unstructured.Unstructured
	// Skipped says, per kind left out, why: its CRD is absent, or the
	// user may not list it.
	Skipped map[string]string
}

// List reads every toolkit kind the cluster serves, one List per kind, in
// namespace ns ("" for all). A kind whose CRD is absent is skipped, as is
// one the user may not list (both recorded in Skipped); any other error
// ends the listing.
func List(ctx context.Context, c client.Reader, ns string) (*Fleet, error) {
	f := &Fleet{Skipped: map[string]string{}}
	for _, k := range kinds.All {
		list := k.NewList()
		err := c.List(ctx, list, client.InNamespace(ns))
		switch {
		case err == nil:
		case apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			f.Skipped[k.Kind] = "not served by the cluster"
			continue
		case apierrors.IsForbidden(err):
			f.Skipped[k.Kind] = err.Error()
			continue
		default:
			return nil, fmt.Errorf("listing %s objects: %w", k.Kind, err)
		}
		for i := range list.Items {
			u := list.Items[i]
			u.SetKind(k.Kind)
			u.SetAPIVersion(k.GroupVersion.String())
			f.Objects = append(f.Objects, u)
		}
	}
	return f, nil
}
