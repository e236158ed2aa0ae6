package helmrelease

import (
	"errors"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// finishStatus turns how the reconcile ended into Ready, Reconciling and
// Stalled, from the conditions the actions wrote. It reads nothing else,
// so it is tested without an API server.
//
// On success Ready mirrors the most telling condition, as Flux summarises:
// TestSuccess when tests are enabled and passed, else Released. A stall
// (retries exhausted, a spec that cannot work) and success both move
// observedGeneration; a failure to retry does not.
func finishStatus(obj *helmv2.HelmRelease, err error) {
	switch {
	case err == nil:
		obj.Status.ObservedGeneration = obj.Generation
		summarize(obj)
	case errs.IsStalling(err):
		obj.Status.ObservedGeneration = obj.Generation
		conditions.MarkStalled(obj, errs.Reason(err, helmv2.ReconciliationFailedReason), "%s", err)
	default:
		if _, waiting := errs.AsWaiting(err); waiting {
			conditions.Delete(obj, meta.StalledCondition)
			if errors.Is(err, dependency.ErrCycle) {
				// A cycle cannot resolve by waiting; say so the way
				// kstatus understands, while the watches catch the fix.
				conditions.MarkStalled(obj, meta.DependencyNotReadyReason, "%s", err)
			}
			conditions.MarkFalse(obj, meta.ReadyCondition, errs.Reason(err, helmv2.ReconciliationFailedReason), "%s", err)
			return
		}
		conditions.MarkFailed(obj, errs.Reason(err, helmv2.ReconciliationFailedReason), "%s", err)
	}
}

// summarize sets Ready True from the condition that best describes the
// release now.
func summarize(obj *helmv2.HelmRelease) {
	if obj.GetTest().Enable {
		if c := conditions.Get(obj, helmv2.TestSuccessCondition); c != nil && c.Status == "True" {
			conditions.MarkReady(obj, c.Reason, "%s", c.Message)
			return
		}
	}
	if c := conditions.Get(obj, helmv2.ReleasedCondition); c != nil && c.Status == "True" {
		conditions.MarkReady(obj, c.Reason, "%s", c.Message)
		return
	}
	conditions.MarkReady(obj, helmv2.ReconciliationSucceededReason, "Release reconciliation succeeded")
}
