package helmrepository

import (
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source"
)

// conditionTypes are the conditions a HelmRepository carries, as
// source-controller writes them; the negative ones go after a success.
var conditionTypes = source.Conditions(nil)

// applyStatus computes the status of a default HelmRepository from what the
// phases observed (out) and how they ended (err). It reads nothing else and
// writes nothing else, so it is tested without an API server.
func applyStatus(obj *sourcev1.HelmRepository, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	obj.Status.Artifact, obj.Status.URL = nil, ""
	if out != nil && out.artifact != nil {
		obj.Status.Artifact = out.artifact
		obj.Status.URL = out.artifact.URL
	}
	if obj.Status.Artifact == nil {
		conditions.Delete(obj, sourcev1.ArtifactInStorageCondition)
	}
	if err != nil {
		applyFailure(obj, out, err)
		return
	}
	msg := readyMessage(obj.Status.Artifact.Revision)
	conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, meta.SucceededReason, "%s", msg)
	conditions.MarkReady(obj, meta.SucceededReason, "%s", msg)
}

// readyMessage is source-controller's ArtifactInStorage (and so Ready)
// message for a HelmRepository.
func readyMessage(revision string) string {
	return "stored artifact: revision '" + revision + "'"
}

func applyFailure(obj *sourcev1.HelmRepository, out *outcome, err error) {
	reason := errs.Reason(err, meta.FailedReason)
	switch reason {
	case sourcev1.ArchiveOperationFailedReason, sourcev1.AcquireLockFailedReason:
		conditions.MarkTrue(obj, sourcev1.StorageOperationFailedCondition, reason, "%s", err)
	default:
		conditions.MarkTrue(obj, sourcev1.FetchFailedCondition, reason, "%s", err)
	}
	// Outdated only when this run saw a newer index it could not store.
	if a := obj.Status.Artifact; a != nil && out != nil && out.revision != "" && a.Revision != out.revision {
		conditions.MarkTrue(obj, sourcev1.ArtifactOutdatedCondition, sourcev1.NewRevisionReason,
			"new index revision '%s'", out.revision)
	} else {
		conditions.Delete(obj, sourcev1.ArtifactOutdatedCondition)
	}
	if errs.IsStalling(err) {
		markStalled(obj, reason, err.Error())
		return
	}
	conditions.MarkFailed(obj, reason, "%s", err)
}

func markStalled(obj *sourcev1.HelmRepository, reason, msg string) {
	conditions.MarkStalled(obj, reason, "%s", msg)
}

// failing reports whether the last reconcile ended in a fetch or storage
// failure, so that recovering from it is announced.
func failing(obj *sourcev1.HelmRepository) bool {
	return conditions.IsTrue(obj, sourcev1.FetchFailedCondition) || conditions.IsTrue(obj, sourcev1.StorageOperationFailedCondition)
}
