package helmrelease

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// dependencies is how internal/apply/dependency reads HelmReleases. A
// HelmRelease's dependsOn names HelmReleases only, and Flux gates them on
// readiness alone (no revision), so the kind adds nothing to the built-in
// check.
var dependencies = dependency.Kind[*helmv2.HelmRelease]{
	New:                func() *helmv2.HelmRelease { return &helmv2.HelmRelease{} },
	NewList:            func() client.ObjectList { return &helmv2.HelmReleaseList{} },
	ObservedGeneration: func(hr *helmv2.HelmRelease) int64 { return hr.Status.ObservedGeneration },
	NotFound: func(key types.NamespacedName, err error) error {
		return fmt.Errorf("unable to get '%s' dependency: %w", key, err)
	},
}

// checkDependencies applies Flux's dependsOn rules before the chart is
// loaded and records Flux's DependencyNotReady event. As in Flux, the
// HelmChart of spec.chart is created or updated first, so that the source
// controller fetches the chart while the release waits and it is there
// the moment the dependencies are.
func (r *Reconciler) checkDependencies(ctx context.Context, obj *helmv2.HelmRelease) error {
	if len(obj.Spec.DependsOn) == 0 {
		return nil
	}
	if obj.Spec.Chart != nil {
		if _, err := r.reconcileHelmChart(ctx, obj); err != nil {
			if _, waiting := errs.AsWaiting(err); !waiting {
				return err
			}
		}
	}
	c := dependency.Checker[*helmv2.HelmRelease]{
		Kind: dependencies, Reader: r.APIReader, Cache: r.Client,
		Additive: r.Options.AdditiveCELDependencyCheck, RequeueAfter: r.Options.RequeueDependency,
	}
	err := c.Check(ctx, obj, nil)
	if err == nil {
		return nil
	}
	if errs.IsStalling(err) {
		err = &errs.Stalling{
			Err:    fmt.Errorf("Reconciliation failed terminally due to configuration error: %w", err), //nolint:staticcheck // Flux's message
			Reason: meta.InvalidCELExpressionReason,
		}
		r.Events.Warning(ctx, obj, meta.InvalidCELExpressionReason, nil, "%s", err)
		return err
	}
	r.Events.Normal(ctx, obj, meta.DependencyNotReadyReason, nil, "%s", err)
	return err
}
