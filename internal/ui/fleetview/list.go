package fleetview

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

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

// Lister lists as one user: its REST client (the user's config) reads the
// lists as JSON, which List decodes without what the pages never show
// (decodeList), and its mapper finds each kind's resource.
type Lister struct {
	Client rest.Interface
	Mapper apimeta.RESTMapper
}

// List reads every toolkit kind the cluster serves, one List per kind, in
// namespace ns ("" for all), a few kinds at a time; the objects come in
// the order of kinds.All, without their inventories. A kind whose CRD is
// absent is skipped, as is one the user may not list (both recorded in
// Skipped); any other error ends the listing.
func List(ctx context.Context, c Lister, ns string) (*Fleet, error) {
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
func listKind(ctx context.Context, c Lister, k kinds.Kind, ns string) (listed, error) {
	var items []unstructured.Unstructured
	mapping, err := c.Mapper.RESTMapping(k.GVK().GroupKind(), k.GroupVersion.Version)
	if err == nil {
		req := c.Client.Get().AbsPath("/apis", k.GroupVersion.Group, k.GroupVersion.Version)
		if ns != "" {
			req = req.Namespace(ns)
		}
		res := req.Resource(mapping.Resource.Resource).Do(ctx)
		// Error, not Raw's error: it decodes the API server's Status (a
		// 403 naming the user, the verb and the resource).
		if err = res.Error(); err == nil {
			raw, _ := res.Raw()
			items, err = decodeList(raw)
		}
	}
	switch {
	case err == nil:
	case apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return listed{skipped: "not served by the cluster"}, nil
	case apierrors.IsForbidden(err):
		return listed{skipped: err.Error(), forbidden: true}, nil
	default:
		return listed{}, fmt.Errorf("listing %s objects: %w", k.Kind, err)
	}
	for i := range items {
		items[i].SetKind(k.Kind)
		items[i].SetAPIVersion(k.GroupVersion.String())
	}
	return listed{objects: items}, nil
}
