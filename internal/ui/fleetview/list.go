package fleetview

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/view/kinds"
)

// listConcurrency bounds the Lists List sends at once: the kinds' lists
// are independent, and one after another they add up the API server's time
// and the client's decoding (13 kinds).
const listConcurrency = 4

// Fleet is every toolkit object one user may list, with the kinds that
// could not be listed and why.
type Fleet struct {
	Objects []unstructured.Unstructured
	// Skipped says, per kind left out, why: its CRD is absent, or the
	// user may not list it.
	Skipped map[string]string
	// Forbidden are the kinds the user may not list where they were
	// listed, in kinds.All order: what they hold is hidden from the user,
	// and a page must say so rather than count them as nothing.
	Forbidden []string
}

// listed is what the List of one kind found: its objects, or why it was
// skipped.
type listed struct {
	objects   []unstructured.Unstructured
	skipped   string
	forbidden bool
}

// List reads every toolkit kind the cluster serves, one List per kind, in
// namespace ns ("" for all), a few kinds at a time; the objects come in
// the order of kinds.All. A kind whose CRD is absent is skipped, as is one
// the user may not list (both recorded in Skipped); any other error ends
// the listing.
func List(ctx context.Context, c client.Reader, ns string) (*Fleet, error) {
	results := make([]listed, len(kinds.All))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listConcurrency)
	for i, k := range kinds.All {
		g.Go(func() error {
			r, err := listKind(gctx, c, k, ns)
			results[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	f := &Fleet{Skipped: map[string]string{}}
	for i, r := range results {
		if r.skipped != "" {
			f.Skipped[kinds.All[i].Kind] = r.skipped
			if r.forbidden {
				f.Forbidden = append(f.Forbidden, kinds.All[i].Kind)
			}
			continue
		}
		f.Objects = append(f.Objects, r.objects...)
	}
	return f, nil
}

// listKind lists the objects of kind k in ns.
func listKind(ctx context.Context, c client.Reader, k kinds.Kind, ns string) (listed, error) {
	list := k.NewList()
	err := c.List(ctx, list, client.InNamespace(ns))
	switch {
	case err == nil:
	case apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return listed{skipped: "not served by the cluster"}, nil
	case apierrors.IsForbidden(err):
		return listed{skipped: err.Error(), forbidden: true}, nil
	default:
		return listed{}, fmt.Errorf("listing %s objects: %w", k.Kind, err)
	}
	for i := range list.Items {
		list.Items[i].SetKind(k.Kind)
		list.Items[i].SetAPIVersion(k.GroupVersion.String())
	}
	return listed{objects: list.Items}, nil
}
