package imageupdateautomation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// readyMessage is Flux's Ready message for a successful run, whether it
// pushed or found nothing to change.
const readyMessage = "repository up-to-date"

// applyStatus computes the status from what the phases observed (out) and
// how they ended (err). It reads nothing else, so it is tested without an
// API server. observedGeneration moves on every run, failed or not, as
// with weir's other kinds, so that waits see the generation handled.
func applyStatus(obj *imagev1.ImageUpdateAutomation, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if out != nil && !out.runTime.IsZero() {
		obj.Status.LastAutomationRunTime = &metav1.Time{Time: out.runTime}
	}
	if err != nil {
		reason := errs.Reason(err, meta.FailedReason)
		conditions.MarkError(obj, reason, err)
		return
	}
	obj.Status.ObservedPolicies = out.policies
	obj.Status.ObservedSourceRevision = out.sourceRevision
	if p := out.push; p != nil {
		obj.Status.LastPushCommit = p.commit
		obj.Status.LastPushTime = &metav1.Time{Time: p.at}
	}
	conditions.MarkReady(obj, meta.SucceededReason, readyMessage)
}
