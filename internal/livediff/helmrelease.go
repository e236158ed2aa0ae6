package livediff

import (
	"context"
	"fmt"
	"sort"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/ssa"
)

// HelmRelease is a rendered HelmRelease: what the controller would apply,
// and the release it would replace.
type HelmRelease struct {
	Object   *helmv2.HelmRelease
	Rendered *release.Rendered
	// Current is the release's newest record in Helm storage; nil before
	// the first install.
	Current *releasev1.Release
	// Client reaches the cluster; nil when there is none.
	Client client.Client
}

// RenderOptions configure RenderHelmRelease.
type RenderOptions struct {
	// ChartDir is a local chart directory, used instead of the chart kept
	// in the release's newest Helm storage record.
	ChartDir string
	// ChartDirFlag names ChartDir in messages ("--chart-dir").
	ChartDirFlag string
}

// RenderHelmRelease renders obj as the helm controller would install or
// upgrade it, with its values (valuesFrom read through c), the chart of
// its newest Helm storage record (or opts.ChartDir) and the cluster's
// capabilities, all read with cfg, the caller's identity. c and cfg may
// both be nil (offline: a ChartDir is then needed, and valuesFrom fails).
func RenderHelmRelease(ctx context.Context, c client.Client, cfg *rest.Config, obj *helmv2.HelmRelease, opts RenderOptions) (*HelmRelease, error) {
	out := &HelmRelease{Object: obj, Client: c}
	values, err := release.Values(ctx, c, obj)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	if c != nil && cfg != nil {
		if out.Current, err = release.Stored(cfg, obj.GetStorageNamespace(), obj.GetReleaseName()); err != nil && opts.ChartDir == "" {
			return nil, err
		}
	}
	chrt, err := chartOf(obj, out.Current, opts)
	if err != nil {
		return nil, err
	}
	ropts := release.RenderOptions{Upgrade: out.Current != nil, Previous: out.Current}
	if c != nil && cfg != nil {
		// Templates see the cluster as the controller's install would, and
		// its REST mapper says which objects are namespaced; Helm's
		// client-only defaults when it cannot be asked.
		if kv, versions, err := release.ClusterCapabilities(cfg); err == nil {
			ropts.KubeVersion, ropts.APIVersions, ropts.Namespaced = kv, versions, c.IsObjectNamespaced
		}
	}
	out.Rendered, err = release.Render(ctx, obj, chrt, values, ropts)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return out, nil
}

// chartOf loads the chart from opts.ChartDir, or takes the one stored
// with the current release.
func chartOf(obj *helmv2.HelmRelease, current *releasev1.Release, opts RenderOptions) (*chartv2.Chart, error) {
	if opts.ChartDir != "" {
		chrt, err := loader.LoadDir(opts.ChartDir)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", opts.ChartDirFlag, opts.ChartDir, err)
		}
		return chrt, nil
	}
	if current == nil || current.Chart == nil {
		msg := fmt.Sprintf("HelmRelease %s/%s: release %s/%s has no record in Helm storage to take the chart from",
			obj.Namespace, obj.Name, obj.GetStorageNamespace(), obj.GetReleaseName())
		if opts.ChartDirFlag != "" {
			msg += "; pass " + opts.ChartDirFlag
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return current.Chart, nil
}

// Diff compares the render with the cluster: the CRDs the CRD policy
// would write and every object, dry-run as helm-controller, then the
// objects of the current release the render no longer has. On an error
// the Result holds what was found before it.
func (hr *HelmRelease) Diff(ctx context.Context) (*Result, error) {
	r := hr.Rendered
	objects, err := crdsToWrite(ctx, hr.Client, r)
	if err != nil {
		return &Result{}, err
	}
	objects = append(objects, r.Objects...)
	res := &Result{}
	rendered, err := res.dryRun(ctx, hr.Client, objects, meta.HelmControllerManager)
	if err != nil {
		return res, err
	}
	deleted, err := hr.releaseDeletes(rendered)
	if err != nil {
		return res, err
	}
	res.deleted(deleted)
	return res, nil
}

// crdsToWrite are the rendered CRDs the policy would apply: every one
// under CreateReplace, the missing ones under Create.
func crdsToWrite(ctx context.Context, c client.Client, r *release.Rendered) ([]*unstructured.Unstructured, error) {
	if r.CRDPolicy == helmv2.CreateReplace {
		return r.CRDs, nil
	}
	var out []*unstructured.Unstructured
	for _, crd := range r.CRDs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(crd.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), live)
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, crd)
		case err != nil:
			return nil, fmt.Errorf("reading CRD %s: %w", crd.GetName(), err)
		}
	}
	return out, nil
}

// releaseDeletes lists the objects of the current release's manifest that
// the render no longer has: the upgrade would delete them.
func (hr *HelmRelease) releaseDeletes(rendered map[ssa.ObjMetadata]bool) ([]string, error) {
	if hr.Current == nil {
		return nil, nil
	}
	objects, err := release.ManifestObjects(hr.Current, release.Namespaced(hr.Client.IsObjectNamespaced, hr.Rendered.CRDs))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objects {
		if id := ssa.ObjMetadataOf(o); !rendered[id] {
			out = append(out, id.String())
		}
	}
	sort.Strings(out)
	return out, nil
}
