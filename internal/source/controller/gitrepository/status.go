package gitrepository

import (
	"reflect"
	"slices"
	"strings"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source"
)

// conditionTypes are the conditions a GitRepository carries, as
// source-controller writes them; the negative ones go after a success.
var conditionTypes = source.Conditions([]string{sourcev1.SourceVerifiedCondition}, sourcev1.IncludeUnavailableCondition)

// applyStatus computes the status from what the phases observed (out) and
// how they ended (err). It reads nothing else and writes nothing else, so it
// is tested without an API server.
func applyStatus(obj *sourcev1.GitRepository, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if out != nil && out.artifact != nil {
		obj.Status.Artifact = out.artifact
	}
	if err != nil {
		applyFailure(obj, out, err)
		return
	}
	recordObserved(obj, out)
	msg := "stored artifact for revision '" + obj.Status.Artifact.Revision + "'"
	conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, meta.SucceededReason, "%s", msg)
	if obj.Spec.Verification != nil && out.verifiedBy != "" {
		conditions.MarkTrue(obj, sourcev1.SourceVerifiedCondition, meta.SucceededReason,
			"verified signature of %s with key %s", verifiedWhat(obj), out.verifiedBy)
	} else if obj.Spec.Verification == nil {
		conditions.Delete(obj, sourcev1.SourceVerifiedCondition)
	}
	conditions.MarkReady(obj, meta.SucceededReason, "%s", msg)
}

func applyFailure(obj *sourcev1.GitRepository, out *outcome, err error) {
	reason := errs.Reason(err, meta.FailedReason)
	switch reason {
	case sourcev1.VerificationError:
		conditions.MarkFalse(obj, sourcev1.SourceVerifiedCondition, reason, "%s", err)
	case sourcev1.ArchiveOperationFailedReason, sourcev1.AcquireLockFailedReason, sourcev1.DirCreationFailedReason:
		conditions.MarkTrue(obj, sourcev1.StorageOperationFailedCondition, reason, "%s", err)
	case sourcev1.IncludeUnavailableCondition:
		conditions.MarkTrue(obj, sourcev1.IncludeUnavailableCondition, reason, "%s", err)
	default:
		conditions.MarkTrue(obj, sourcev1.FetchFailedCondition, reason, "%s", err)
	}
	if a := obj.Status.Artifact; a != nil && out != nil && out.revision != "" && a.Revision != out.revision {
		conditions.MarkTrue(obj, sourcev1.ArtifactOutdatedCondition, sourcev1.NewRevisionReason,
			"new upstream revision '%s'", out.revision)
	}
	conditions.MarkError(obj, reason, err)
}

// recordObserved remembers the spec fields the stored artifact was built
// with, so a later run knows whether a spec change needs a new artifact.
func recordObserved(obj *sourcev1.GitRepository, out *outcome) {
	obj.Status.ObservedIgnore = obj.Spec.Ignore
	obj.Status.ObservedRecurseSubmodules = obj.Spec.RecurseSubmodules
	obj.Status.ObservedInclude = obj.Spec.Include
	obj.Status.ObservedSparseCheckout = obj.Spec.SparseCheckout
	obj.Status.IncludedArtifacts = nil
	for i := range out.includes {
		obj.Status.IncludedArtifacts = append(obj.Status.IncludedArtifacts, &out.includes[i])
	}
	if obj.Spec.Verification != nil {
		mode := obj.Spec.Verification.GetMode()
		obj.Status.SourceVerificationMode = &mode
	} else {
		obj.Status.SourceVerificationMode = nil
	}
}

// observedSpecUnchanged reports whether the stored artifact was built with
// the current spec and the current included artifacts.
func observedSpecUnchanged(obj *sourcev1.GitRepository, includes []meta.Artifact) bool {
	s, st := obj.Spec, obj.Status
	if !reflect.DeepEqual(s.Ignore, st.ObservedIgnore) || s.RecurseSubmodules != st.ObservedRecurseSubmodules ||
		!slices.Equal(s.SparseCheckout, st.ObservedSparseCheckout) || !reflect.DeepEqual(s.Include, st.ObservedInclude) {
		return false
	}
	if s.Verification != nil && (st.SourceVerificationMode == nil || *st.SourceVerificationMode != s.Verification.GetMode()) {
		return false
	}
	if len(includes) != len(st.IncludedArtifacts) {
		return false
	}
	for i := range includes {
		if st.IncludedArtifacts[i] == nil || st.IncludedArtifacts[i].Digest != includes[i].Digest {
			return false
		}
	}
	return true
}

func verifiedWhat(obj *sourcev1.GitRepository) string {
	switch obj.Spec.Verification.GetMode() {
	case sourcev1.ModeGitTag:
		return "tag"
	case sourcev1.ModeGitTagAndHEAD:
		return "tag and commit"
	default:
		return "commit"
	}
}

func joinIDs(ids []string) string { return strings.Join(slices.Compact(ids), ", ") }
