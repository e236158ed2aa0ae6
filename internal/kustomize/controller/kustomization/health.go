package kustomization

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/health"
	"github.com/weir-gitops/weir/internal/apply/parked"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// healthChecks are a Kustomization's compiled spec.healthCheckExprs: CEL
// for the kinds they name, kstatus for every other kind.
type healthChecks = health.Checks

// compileHealthChecks compiles spec.healthCheckExprs; an expression that
// does not compile stalls the Kustomization until its spec changes.
func (r *Reconciler) compileHealthChecks(obj *kustomizev1.Kustomization) (*healthChecks, error) {
	checks, err := health.Compile(obj.Spec.HealthCheckExprs)
	if err != nil {
		return nil, &errs.Stalling{Err: err, Reason: meta.InvalidCELExpressionReason}
	}
	return checks, nil
}

// checkHealth waits for what spec.wait or spec.healthChecks name, up to
// spec.timeout, and records the time it took. It looks once, then parks
// the wait (internal/apply/parked) and gives the worker back while objects roll out.
func (r *Reconciler) checkHealth(ctx context.Context, obj *kustomizev1.Kustomization, mgr *ssa.Manager,
	checks *healthChecks, out *outcome) (healthResult, error) {
	var objects []ssa.ObjMetadata
	switch {
	case obj.Spec.Wait:
		objects = out.apply.applied.Objects()
	case len(obj.Spec.HealthChecks) > 0:
		var err error
		if objects, err = healthCheckObjects(obj.Spec.HealthChecks); err != nil {
			return healthResult{}, err
		}
	}
	// A Kustomization never waits for itself.
	self := ssa.ObjMetadata{Namespace: obj.Namespace, Name: obj.Name,
		GroupKind: schema.GroupKind{Group: kustomizev1.GroupVersion.Group, Kind: kustomizev1.KustomizationKind}}
	toCheck := objects[:0:0]
	for _, o := range objects {
		if o != self {
			toCheck = append(toCheck, o)
		}
	}
	if len(toCheck) == 0 {
		return healthResult{}, nil
	}
	rev := out.source.revision
	msg := fmt.Sprintf("Running health checks for revision %s with a timeout of %s", rev, timeoutOf(obj))
	conditions.MarkUnknown(obj, meta.HealthyCondition, meta.ProgressingReason, "%s", msg)
	if err := r.progressMessage(ctx, obj, &out.progress, msg); err != nil {
		return healthResult{}, err
	}
	w := r.parkedWaits().Park(parked.Spec[carried]{
		Owner: keyOf(obj), For: parkedFor(obj, rev), Objects: toCheck, Checks: checks,
		Deadline: deadlineOf(ctx, obj, r.now()), Watchable: watchable(obj), Applied: out.apply.applied,
		Carry: carried{checksum: out.build.checksum, changed: out.changed()},
	})
	return r.judgeHealth(ctx, obj, mgr, mgr.Client(), w, healthResult{})
}

// defaultHealthCheckAPIVersion is what a spec.healthChecks entry without an
// apiVersion means: Flux's controller reads it so, for Kustomization
// v1beta1 repositories and for what `flux create kustomization
// --health-check=Deployment/name.namespace` writes.
const defaultHealthCheckAPIVersion = "apps/v1"

// healthCheckObjects turns spec.healthChecks into the objects to wait for.
// An apiVersion that does not parse stalls the Kustomization.
func healthCheckObjects(refs []meta.NamespacedObjectKindReference) ([]ssa.ObjMetadata, error) {
	objects := make([]ssa.ObjMetadata, 0, len(refs))
	for _, ref := range refs {
		apiVersion := ref.APIVersion
		if apiVersion == "" {
			apiVersion = defaultHealthCheckAPIVersion
		}
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, &errs.Stalling{Err: fmt.Errorf("invalid health check apiVersion %q: %w", ref.APIVersion, err), Reason: meta.HealthCheckFailedReason}
		}
		objects = append(objects, ssa.ObjMetadata{
			Namespace: ref.Namespace, Name: ref.Name,
			GroupKind: schema.GroupKind{Group: gv.Group, Kind: ref.Kind},
		})
	}
	return objects, nil
}

func isHealthy(obj *kustomizev1.Kustomization) bool {
	return apimeta.IsStatusConditionTrue(obj.Status.Conditions, meta.HealthyCondition)
}
