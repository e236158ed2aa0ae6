package bucket

import (
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source"
)

// conditionTypes are the conditions a Bucket carries, as
// source-controller writes them; the negative ones go after a success.
var conditionTypes = source.Conditions(nil)

// applyStatus computes the status from what the phases observed (out) and
// how they ended (err). It reads nothing else and writes nothing else, so it
// is tested without an API server.
func applyStatus(obj *sourcev1.Bucket, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if out != nil && out.artifact != nil {
		obj.Status.Artifact = out.artifact
		obj.Status.URL = out.artifact.URL
	}
	if err != nil {
		applyFailure(obj, out, err)
		return
	}
	// The stored artifact is what the current spec produces (same index
	// digest), so the spec it answers to is the current one.
	obj.Status.ObservedIgnore = obj.Spec.Ignore
	msg := "stored artifact: revision '" + obj.Status.Artifact.Revision + "'"
	conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, meta.SucceededReason, "%s", msg)
	conditions.MarkReady(obj, meta.SucceededReason, "%s", msg)
}

func applyFailure(obj *sourcev1.Bucket, out *outcome, err error) {
	reason := errs.Reason(err, meta.FailedReason)
	// A storage failure comes after a successful fetch and the other way
	// round, so the other condition no longer holds.
	switch reason {
	case sourcev1.ArchiveOperationFailedReason, sourcev1.AcquireLockFailedReason, sourcev1.DirCreationFailedReason:
		conditions.MarkTrue(obj, sourcev1.StorageOperationFailedCondition, reason, "%s", err)
		conditions.Delete(obj, sourcev1.FetchFailedCondition)
	default:
		conditions.MarkTrue(obj, sourcev1.FetchFailedCondition, reason, "%s", err)
		conditions.Delete(obj, sourcev1.StorageOperationFailedCondition)
	}
	if a := obj.Status.Artifact; a != nil && out != nil && out.revision != "" && a.Revision != out.revision {
		conditions.MarkTrue(obj, sourcev1.ArtifactOutdatedCondition, sourcev1.NewRevisionReason,
			"new upstream revision '%s'", out.revision)
	}
	conditions.MarkError(obj, reason, err)
}
