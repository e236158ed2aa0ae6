package imagerepository

import (
	"fmt"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// TagLimitCondition is weir's condition on an ImageRepository whose
// registry lists more tags (after the exclusion list) than
// --max-tags-per-image-repository: True while the last scan dropped some.
// Flux has no limit, and no such condition.
const TagLimitCondition = "TagLimitExceeded"

// TagLimitReason is TagLimitCondition's reason.
const TagLimitReason = "TagLimitExceeded"

// ReadyMessage is Flux 2.9's Ready message after a scan.
func ReadyMessage(r *imagev1.ScanResult) string {
	return fmt.Sprintf("successful scan: found %d tags with checksum %s", r.TagCount, r.Revision)
}

// applyStatus computes the status from what the phases observed and how
// they ended. It reads nothing else, so it is tested without an API server.
func applyStatus(obj *imagev1.ImageRepository, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if err != nil {
		reason := errs.Reason(err, meta.FailedReason)
		conditions.MarkError(obj, reason, err)
		return
	}
	obj.Status.CanonicalImageName = out.canonical
	obj.Status.ObservedExclusionList = obj.GetExclusionList()
	if out.scan != nil {
		obj.Status.LastScanResult = out.scan
		if out.dropped > 0 {
			conditions.MarkTrue(obj, TagLimitCondition, TagLimitReason,
				"the registry lists %d tags after the exclusion list, more than the %d kept per repository (--max-tags-per-image-repository): kept the %d greatest in version order, dropped %d",
				out.listed, out.scan.TagCount, out.scan.TagCount, out.dropped)
		} else {
			conditions.Delete(obj, TagLimitCondition)
		}
	}
	if obj.Status.LastScanResult == nil {
		// Not reachable: a success without a scan needs an earlier one.
		conditions.MarkFailed(obj, meta.FailedReason, "no scan result")
		return
	}
	conditions.MarkReady(obj, meta.SucceededReason, "%s", ReadyMessage(obj.Status.LastScanResult))
}
