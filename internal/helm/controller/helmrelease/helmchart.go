package helmrelease

import (
	"context"
	"fmt"
	"maps"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	helmchart "github.com/weir-gitops/weir/internal/source/chart"
)

// Labels the controller puts on the HelmChart it creates, naming its
// HelmRelease (Flux's).
const (
	nameLabel      = "helm.toolkit.fluxcd.io/name"
	namespaceLabel = "helm.toolkit.fluxcd.io/namespace"
)

// desiredHelmChart is the HelmChart of spec.chart.
func desiredHelmChart(obj *helmv2.HelmRelease) *sourcev1.HelmChart {
	tpl := obj.Spec.Chart
	_, key, _ := helmchart.SourceOf(obj)
	hc := &sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	labels := map[string]string{}
	if tpl.ObjectMeta != nil {
		maps.Copy(labels, tpl.ObjectMeta.Labels)
		hc.Annotations = maps.Clone(tpl.ObjectMeta.Annotations)
	}
	labels[nameLabel], labels[namespaceLabel] = obj.Name, obj.Namespace
	hc.Labels = labels
	version := tpl.Spec.Version
	if version == "" {
		version = "*"
	}
	hc.Spec = sourcev1.HelmChartSpec{
		Chart:   tpl.Spec.Chart,
		Version: version,
		SourceRef: sourcev1.LocalHelmChartSourceReference{
			APIVersion: tpl.Spec.SourceRef.APIVersion, Kind: tpl.Spec.SourceRef.Kind, Name: tpl.Spec.SourceRef.Name,
		},
		Interval:                 tpl.Spec.GetInterval(obj.Spec.Interval),
		ReconcileStrategy:        tpl.Spec.ReconcileStrategy,
		ValuesFiles:              tpl.Spec.ValuesFiles,
		IgnoreMissingValuesFiles: tpl.Spec.IgnoreMissingValuesFiles,
	}
	if v := tpl.Spec.Verify; v != nil {
		hc.Spec.Verify = &sourcev1.OCIVerification{Provider: v.Provider, SecretRef: v.SecretRef}
	}
	return hc
}

// reconcileHelmChart creates or updates the HelmChart of spec.chart,
// records it in status.helmChart, and returns it once it is ready for its
// current generation.
func (r *Reconciler) reconcileHelmChart(ctx context.Context, obj *helmv2.HelmRelease) (Source, error) {
	want := desiredHelmChart(obj)
	key := types.NamespacedName{Namespace: want.Namespace, Name: want.Name}
	if r.Options.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
		return nil, &errs.Stalling{
			Err:    fmt.Errorf("can't access '%s/%s', cross-namespace references have been blocked", obj.Spec.Chart.Spec.SourceRef.Kind, key),
			Reason: accessDeniedReason,
		}
	}
	var hc sourcev1.HelmChart
	err := r.Client.Get(ctx, key, &hc)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil {
			return nil, &errs.Generic{Err: fmt.Errorf("failed to create HelmChart '%s': %w", key, err), Reason: helmv2.ArtifactFailedReason}
		}
		hc = *want
	case err != nil:
		return nil, &errs.Generic{Err: fmt.Errorf("failed to get HelmChart '%s': %w", key, err), Reason: helmv2.ArtifactFailedReason}
	case !apiequality.Semantic.DeepEqual(hc.Spec, want.Spec) || !maps.Equal(hc.Labels, want.Labels) || !maps.Equal(hc.Annotations, want.Annotations):
		hc.Spec, hc.Labels, hc.Annotations = want.Spec, want.Labels, want.Annotations
		if err := r.Client.Update(ctx, &hc); err != nil {
			return nil, &errs.Generic{Err: fmt.Errorf("failed to update HelmChart '%s': %w", key, err), Reason: helmv2.ArtifactFailedReason}
		}
	}
	obj.Status.HelmChart = key.String()
	if hc.Status.ObservedGeneration != hc.Generation || hc.Status.Artifact == nil {
		return nil, &errs.Waiting{
			Err:          fmt.Errorf("HelmChart '%s' is not ready", key),
			Reason:       helmv2.ArtifactFailedReason,
			RequeueAfter: r.Options.RequeueDependency,
		}
	}
	return &hc, nil
}

// deleteHelmChart removes the HelmChart recorded in status.helmChart, for
// a deleted HelmRelease or one that moved to spec.chartRef.
func (r *Reconciler) deleteHelmChart(ctx context.Context, obj *helmv2.HelmRelease) error {
	if obj.Status.HelmChart == "" {
		return nil
	}
	ns, name, ok := cutNamespacedName(obj.Status.HelmChart)
	if ok {
		hc := &sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := r.Client.Delete(ctx, hc); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete HelmChart '%s': %w", obj.Status.HelmChart, err)
		}
	}
	obj.Status.HelmChart = ""
	return nil
}

func cutNamespacedName(s string) (string, string, bool) {
	ns, name, ok := strings.Cut(s, "/")
	return ns, name, ok && ns != "" && name != ""
}
