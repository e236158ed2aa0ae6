package kustomization

import (
	"errors"
	"time"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// applyStatus computes the status from the phases' results (out) and how
// they ended (err), as kustomize-controller writes it. It reads nothing
// else, so it is tested without an API server.
//
// observedGeneration moves only when the generation was handled for good:
// on success, or when the spec cannot work (stalled). A dependent reading a
// failed dependency therefore sees an old observedGeneration and waits.
func applyStatus(obj *kustomizev1.Kustomization, out *outcome, err error, now time.Time, took time.Duration) {
	if _, ok := errs.AsInProgress(err); ok {
		// A parked health check: applied and recorded, not finished. The
		// progress conditions stay; lastHandledReconcileAt, history and
		// the applied revision wait for the end.
		obj.Status.LastAttemptedRevision = out.source.revision
		if out.apply.inventory != nil {
			obj.Status.Inventory = out.apply.inventory
		}
		return
	}
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if out == nil {
		out = &outcome{}
	}
	src, build := out.source, out.build
	if build.attempted {
		obj.Status.LastAttemptedRevision = src.revision
	}
	if out.apply.inventory != nil {
		obj.Status.Inventory = out.apply.inventory
	}
	historyMeta := map[string]string{"revision": src.revision}
	if src.originRevision != "" {
		historyMeta["originRevision"] = src.originRevision
	}

	if err != nil {
		applyFailure(obj, err)
		if build.checksum != "" {
			obj.Status.History.Upsert(build.checksum, now, took, conditions.Get(obj, meta.ReadyCondition).Reason, historyMeta)
		}
		return
	}

	obj.Status.ObservedGeneration = obj.Generation
	obj.Status.LastAppliedRevision = src.revision
	obj.Status.LastAppliedOriginRevision = src.originRevision
	if out.health.passed {
		conditions.MarkTrue(obj, meta.HealthyCondition, meta.SucceededReason, "Health check passed in %s", out.health.took)
	} else {
		conditions.Delete(obj, meta.HealthyCondition)
	}
	conditions.MarkReady(obj, meta.ReconciliationSucceededReason, "Applied revision: %s", src.revision)
	obj.Status.History.Upsert(build.checksum, now, took, meta.ReconciliationSucceededReason, historyMeta)
}

func applyFailure(obj *kustomizev1.Kustomization, err error) {
	reason := errs.Reason(err, meta.ReconciliationFailedReason)
	if reason == meta.HealthCheckFailedReason {
		conditions.MarkFalse(obj, meta.HealthyCondition, reason, "%s", err)
	}
	switch {
	case errs.IsStalling(err):
		obj.Status.ObservedGeneration = obj.Generation
		conditions.MarkStalled(obj, reason, "%s", err)
	case errors.Is(err, dependency.ErrCycle):
		// A cycle cannot resolve by waiting; say so the way kstatus
		// understands, while the watches still catch the fix.
		conditions.MarkStalled(obj, reason, "%s", err)
	case isWaiting(err):
		// Waiting on something else (a dependency, an artifact) is not a
		// failure of this Kustomization's spec: no Reconciling retry, and
		// the progress a phase reported before it had to wait is over.
		conditions.Delete(obj, meta.StalledCondition)
		conditions.Delete(obj, meta.ReconcilingCondition)
		conditions.MarkFalse(obj, meta.ReadyCondition, reason, "%s", err)
	default:
		conditions.MarkFailed(obj, reason, "%s", err)
	}
}

func isWaiting(err error) bool {
	_, ok := errs.AsWaiting(err)
	return ok
}
