package ocirepository

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source"
)

// conditionTypes are the conditions an OCIRepository carries, as
// source-controller writes them; the negative ones go after a success.
var conditionTypes = source.Conditions([]string{sourcev1.SourceVerifiedCondition})

// applyStatus computes the status from what the phases observed (out) and
// how they ended (err). It reads nothing else and writes nothing else, so it
// is tested without an API server.
func applyStatus(obj *sourcev1.OCIRepository, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if out != nil && out.artifact != nil {
		obj.Status.Artifact = out.artifact
		obj.Status.URL = out.artifact.URL
	}
	applyVerified(obj, out, err)
	if err != nil {
		applyFailure(obj, out, err)
		return
	}
	recordObserved(obj)
	msg := "stored artifact for digest '" + obj.Status.Artifact.Revision + "'"
	conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, meta.SucceededReason, "%s", msg)
	conditions.MarkReady(obj, meta.SucceededReason, "%s", msg)
}

// applyVerified records this run's verification. Without spec.verify there
// is no SourceVerified condition; a failed verification that this run did
// not repeat is dropped, as Flux recomputes it; a success not repeated
// (same revision, same generation) stays.
func applyVerified(obj *sourcev1.OCIRepository, out *outcome, err error) {
	switch {
	case obj.Spec.Verify == nil:
		conditions.Delete(obj, sourcev1.SourceVerifiedCondition)
	case out != nil && out.verifiedBy != "":
		conditions.MarkTrue(obj, sourcev1.SourceVerifiedCondition, meta.SucceededReason,
			"verified signature of revision %s", out.revision)
	case errs.Reason(err, "") == sourcev1.VerificationError:
		conditions.MarkFalse(obj, sourcev1.SourceVerifiedCondition, sourcev1.VerificationError, "%s", err)
	default:
		if c := conditions.Get(obj, sourcev1.SourceVerifiedCondition); c != nil && c.Status != metav1.ConditionTrue {
			conditions.Delete(obj, sourcev1.SourceVerifiedCondition)
		}
	}
}

func applyFailure(obj *sourcev1.OCIRepository, out *outcome, err error) {
	reason := errs.Reason(err, meta.FailedReason)
	switch reason {
	case sourcev1.VerificationError:
		// SourceVerified carries it (applyVerified).
	case sourcev1.ArchiveOperationFailedReason, sourcev1.AcquireLockFailedReason, sourcev1.DirCreationFailedReason:
		conditions.MarkTrue(obj, sourcev1.StorageOperationFailedCondition, reason, "%s", err)
	default:
		conditions.MarkTrue(obj, sourcev1.FetchFailedCondition, reason, "%s", err)
	}
	if a := obj.Status.Artifact; a != nil && out != nil && out.revision != "" && a.Revision != out.revision {
		conditions.MarkTrue(obj, sourcev1.ArtifactOutdatedCondition, sourcev1.NewRevisionReason,
			"new revision '%s' for '%s'", out.revision, out.ref)
	}
	conditions.MarkError(obj, reason, err)
}

// recordObserved remembers the spec fields the stored artifact was built
// with, so a later run knows whether a spec change needs a new artifact.
func recordObserved(obj *sourcev1.OCIRepository) {
	obj.Status.ObservedIgnore = obj.Spec.Ignore
	obj.Status.ObservedLayerSelector = obj.Spec.LayerSelector.DeepCopy()
}

// observedSpecUnchanged reports whether the stored artifact was built with
// the current spec.ignore and layer selector. Selectors are compared by
// effect: no selector and {operation: extract} select the same.
func observedSpecUnchanged(obj *sourcev1.OCIRepository) bool {
	s, st := obj.Spec, obj.Status
	if (s.Ignore == nil) != (st.ObservedIgnore == nil) || (s.Ignore != nil && *s.Ignore != *st.ObservedIgnore) {
		return false
	}
	return effectiveSelector(s.LayerSelector) == effectiveSelector(st.ObservedLayerSelector)
}

func effectiveSelector(sel *sourcev1.OCILayerSelector) sourcev1.OCILayerSelector {
	out := sourcev1.OCILayerSelector{Operation: sourcev1.OCILayerExtract}
	if sel != nil {
		out.MediaType = sel.MediaType
		if sel.Operation != "" {
			out.Operation = sel.Operation
		}
	}
	return out
}
