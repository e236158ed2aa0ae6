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
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/helm/release"
	helmchart "github.com/weir-gitops/weir/internal/source/chart"
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
	// Chart is the chart rendered; ChartFrom says where it came from
	// ("HelmChart apps/apps-web at 1.1.0", "--chart-dir ./charts/web",
	// "the chart of the current release (OCIRepository apps/web not
	// found)").
	Chart     *chartv2.Chart
	ChartFrom string
	// FromStorage is set when the chart is the current release's, its
	// source being missing or without an artifact: a new chart version
	// cannot show then.
	FromStorage bool
}

// RenderOptions configure RenderHelmRelease.
type RenderOptions struct {
	// ChartDir is a local chart directory, used instead of the chart kept
	// in the release's newest Helm storage record.
	ChartDir string
	// ChartDirFlag names ChartDir in messages ("--chart-dir").
	ChartDirFlag string
	// Fetch downloads the chart source's artifact; when nil, an
	// ArtifactFetcher with the caller's rest.Config.
	Fetch helmchart.Fetch
}

// RenderHelmRelease renders obj as the helm controller would install or
// upgrade it now, with its values (valuesFrom read through c), the chart
// the controller would install (its HelmChart's or chartRef's current
// artifact, loaded by internal/source/chart as the controller loads it; or
// opts.ChartDir) and the cluster's capabilities, all read with cfg, the
// caller's identity. When the source or its artifact is missing, the
// chart of the newest Helm storage record stands in (ChartFrom says so).
// c and cfg may both be nil (offline: a ChartDir is then needed, and
// valuesFrom fails).
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
	if opts.Fetch == nil {
		opts.Fetch = ArtifactFetcher{Config: cfg}.Fetch
	}
	if out.Chart, out.ChartFrom, err = chartOf(ctx, c, obj, out.Current, opts); err != nil {
		return nil, err
	}
	out.FromStorage = out.Current != nil && out.Chart == out.Current.Chart
	ropts := release.RenderOptions{Upgrade: out.Current != nil, Previous: out.Current}
	if c != nil && cfg != nil {
		// Templates see the cluster as the controller's install would, and
		// its REST mapper says which objects are namespaced; Helm's
		// client-only defaults when it cannot be asked.
		if kv, versions, err := release.ClusterCapabilities(cfg); err == nil {
			ropts.KubeVersion, ropts.APIVersions, ropts.Namespaced = kv, versions, c.IsObjectNamespaced
		}
	}
	out.Rendered, err = release.Render(ctx, obj, out.Chart, values, ropts)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	return out, nil
}

// chartOf loads the chart from opts.ChartDir, else from the chart's
// source (through c), else takes the one stored with the current release.
func chartOf(ctx context.Context, c client.Client, obj *helmv2.HelmRelease, current *releasev1.Release,
	opts RenderOptions) (*chartv2.Chart, string, error) {
	if opts.ChartDir != "" {
		chrt, err := loader.LoadDir(opts.ChartDir)
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", opts.ChartDirFlag, opts.ChartDir, err)
		}
		return chrt, opts.ChartDirFlag + " " + opts.ChartDir, nil
	}
	missing := "no cluster to read the chart's source from"
	if c != nil {
		chrt, from, err := sourceChart(ctx, c, obj, opts.Fetch)
		if err != nil || chrt != nil {
			return chrt, from, err
		}
		missing = from
	}
	if current == nil || current.Chart == nil {
		msg := fmt.Sprintf("HelmRelease %s/%s: %s, and release %s/%s has no record in Helm storage to take the chart from",
			obj.Namespace, obj.Name, missing, obj.GetStorageNamespace(), obj.GetReleaseName())
		if opts.ChartDirFlag != "" {
			msg += "; pass " + opts.ChartDirFlag
		}
		return nil, "", fmt.Errorf("%s", msg)
	}
	return current.Chart, "the chart of the current release (" + missing + ")", nil
}

// sourceChart loads the chart the helm controller would install now: the
// current artifact of obj's HelmChart or chartRef target, digest
// verified, with an OCIRepository's digest as build metadata (Flux's
// default). A source that is missing or has no artifact yet gives a nil
// chart and says why in from.
func sourceChart(ctx context.Context, c client.Client, obj *helmv2.HelmRelease, fetch helmchart.Fetch) (chrt *chartv2.Chart, from string, err error) {
	kind, key, ok := helmchart.SourceOf(obj)
	if !ok {
		return nil, "neither spec.chart nor spec.chartRef is set", nil
	}
	src := sourcev1.NewObject(kind)
	if src == nil {
		return nil, "", fmt.Errorf("HelmRelease %s/%s: unsupported source kind '%s'", obj.Namespace, obj.Name, kind)
	}
	name := kind + " " + key.String()
	if err := c.Get(ctx, key, src); apierrors.IsNotFound(err) {
		return nil, name + " not found", nil
	} else if err != nil {
		return nil, "", fmt.Errorf("HelmRelease %s/%s: reading the chart's source %s: %w", obj.Namespace, obj.Name, name, err)
	}
	a := src.GetArtifact()
	if a == nil {
		return nil, name + " has no artifact yet", nil
	}
	if chrt, err = helmchart.LoadArtifact(ctx, fetch, a); err != nil {
		return nil, "", fmt.Errorf("HelmRelease %s/%s: the chart of %s at %s: %w", obj.Namespace, obj.Name, name, a.Revision, err)
	}
	if kind == sourcev1.OCIRepositoryKind {
		chrt.Metadata.Version = helmchart.WithDigest(chrt.Metadata.Version, helmchart.OCIDigest(a))
	}
	return chrt, name + " at " + a.Revision, nil
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
