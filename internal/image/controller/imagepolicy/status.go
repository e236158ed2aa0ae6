package imagepolicy

import (
	"fmt"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// ReadyMessage is Flux's Ready message for the elected ref and the one it
// replaced.
func ReadyMessage(latest, previous *imagev1.ImageRef) string {
	msg := fmt.Sprintf("Latest image tag for %s resolved to %s", latest.Name, latest.Tag)
	if latest.Digest != "" {
		msg += " with digest " + latest.Digest
	}
	if previous != nil && *previous != *latest {
		msg += fmt.Sprintf(" (previously %s:%s", previous.Name, previous.Tag)
		if previous.Digest != "" {
			msg += "@" + previous.Digest
		}
		msg += ")"
	}
	return msg
}

// applyStatus computes the status from the elected ref and how the phases
// ended. A ref different from status.latestRef moves the old one to
// observedPreviousRef.
func applyStatus(obj *imagev1.ImagePolicy, ref *imagev1.ImageRef, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if err != nil {
		reason := errs.Reason(err, FailureReason)
		switch {
		case errs.IsStalling(err):
			conditions.MarkStalled(obj, reason, "%s", err)
		default:
			conditions.MarkFailed(obj, reason, "%s", err)
		}
		return
	}
	if obj.Status.LatestRef == nil || *obj.Status.LatestRef != *ref {
		obj.Status.ObservedPreviousRef = obj.Status.LatestRef
		obj.Status.LatestRef = ref
	}
	conditions.MarkReady(obj, meta.SucceededReason, "%s", ReadyMessage(obj.Status.LatestRef, obj.Status.ObservedPreviousRef))
}
