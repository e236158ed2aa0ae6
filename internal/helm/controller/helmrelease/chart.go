package helmrelease

import (
	"context"
	"errors"
	"fmt"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/artifact"
	helmchart "github.com/weir-gitops/weir/internal/source/chart"
)

// Source is a chartRef target: an object with an artifact.
type Source = sourcev1.Object

// accessDeniedReason is Flux's reason for a refused reference.
const accessDeniedReason = "AccessDenied"

// newSource returns an empty object of a chartRef kind, or nil.
func newSource(kind string) Source {
	switch kind {
	case sourcev1.HelmChartKind, sourcev1.OCIRepositoryKind, sourcev1.ExternalArtifactKind:
		return sourcev1.NewObject(kind)
	}
	return nil
}

// loadedChart is the chart of one reconcile and where it came from.
type loadedChart struct {
	chart *chartv2.Chart
	// artifact of the source.
	artifact *meta.Artifact
	// ociDigest is set for OCIRepository charts.
	ociDigest string
}

// getChart resolves spec.chartRef, downloads its artifact and loads the
// chart.
func (r *Reconciler) getChart(ctx context.Context, obj *helmv2.HelmRelease) (*loadedChart, error) {
	src, err := r.chartSource(ctx, obj)
	if err != nil {
		return nil, err
	}
	a := src.GetArtifact()
	if a == nil {
		return nil, &errs.Waiting{
			Err:          fmt.Errorf("no artifact available for %s source '%s/%s'", sourceKind(obj), src.GetNamespace(), src.GetName()),
			Reason:       helmv2.ArtifactFailedReason,
			RequeueAfter: r.Options.RequeueDependency,
		}
	}
	chrt, err := r.loadChart(ctx, a)
	if err != nil {
		return nil, err
	}
	out := &loadedChart{chart: chrt, artifact: a}
	if obj.Spec.ChartRef != nil && obj.Spec.ChartRef.Kind == sourcev1.OCIRepositoryKind {
		out.ociDigest = helmchart.OCIDigest(a)
		if !r.Options.DisableChartDigestTracking {
			chrt.Metadata.Version = helmchart.WithDigest(chrt.Metadata.Version, out.ociDigest)
		}
	}
	return out, nil
}

// chartSource is the object whose artifact is the chart: the HelmChart
// made from spec.chart, or spec.chartRef's target (after garbage-collecting
// a HelmChart left from an earlier spec.chart).
func (r *Reconciler) chartSource(ctx context.Context, obj *helmv2.HelmRelease) (Source, error) {
	if obj.Spec.Chart != nil {
		return r.reconcileHelmChart(ctx, obj)
	}
	if err := r.deleteHelmChart(ctx, obj); err != nil {
		return nil, &errs.Generic{Err: err, Reason: helmv2.ArtifactFailedReason}
	}
	if obj.Spec.ChartRef == nil {
		return nil, &errs.Stalling{Err: errors.New("either chart or chartRef must be set"), Reason: helmv2.ArtifactFailedReason}
	}
	return r.getSource(ctx, obj)
}

// sourceKind is the kind of the object the chart comes from.
func sourceKind(obj *helmv2.HelmRelease) string {
	if obj.Spec.ChartRef != nil {
		return obj.Spec.ChartRef.Kind
	}
	return sourcev1.HelmChartKind
}

func (r *Reconciler) getSource(ctx context.Context, obj *helmv2.HelmRelease) (Source, error) {
	ref := obj.Spec.ChartRef
	_, key, _ := helmchart.SourceOf(obj)
	if r.Options.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
		return nil, &errs.Stalling{
			Err:    fmt.Errorf("can't access '%s/%s', cross-namespace references have been blocked", ref.Kind, key),
			Reason: accessDeniedReason,
		}
	}
	if ref.Kind == sourcev1.ExternalArtifactKind && !r.Options.AllowExternalArtifact {
		return nil, &errs.Stalling{
			Err:    fmt.Errorf("can't access '%s/%s', ExternalArtifact feature gate is disabled", ref.Kind, key),
			Reason: accessDeniedReason,
		}
	}
	src := newSource(ref.Kind)
	if src == nil {
		return nil, &errs.Stalling{Err: fmt.Errorf("unsupported source kind '%s'", ref.Kind), Reason: helmv2.ArtifactFailedReason}
	}
	if err := r.Client.Get(ctx, key, src); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &errs.Waiting{
				Err:          fmt.Errorf("could not get %s '%s': %w", ref.Kind, key, err),
				Reason:       helmv2.ArtifactFailedReason,
				RequeueAfter: r.Options.RequeueDependency,
			}
		}
		return nil, &errs.Generic{Err: fmt.Errorf("could not get %s '%s': %w", ref.Kind, key, err), Reason: helmv2.ArtifactFailedReason}
	}
	return src, nil
}

// loadChart downloads the artifact (a packaged chart, or a tarball of a
// chart directory), verifies its digest and loads the chart from it, with
// internal/source/chart's LoadArtifact, as `weir diff hr` and the UI do.
func (r *Reconciler) loadChart(ctx context.Context, a *meta.Artifact) (*chartv2.Chart, error) {
	fetcher := r.Fetcher
	if fetcher == nil {
		fetcher = &artifact.Fetcher{}
	}
	chrt, err := helmchart.LoadArtifact(ctx, func(ctx context.Context, a *meta.Artifact, dir string) error {
		return fetcher.Fetch(ctx, a.URL, a.Digest, dir)
	}, a)
	if errors.Is(err, artifact.ErrArtifactNotFound) {
		return nil, &errs.Waiting{
			Err:          fmt.Errorf("Source is not ready, artifact not found, retrying in %s", r.Options.RequeueDependency), //nolint:staticcheck // Flux's message
			Reason:       helmv2.ArtifactFailedReason,
			RequeueAfter: r.Options.RequeueDependency,
		}
	}
	if err != nil {
		return nil, &errs.Generic{Err: err, Reason: helmv2.ArtifactFailedReason}
	}
	return chrt, nil
}
