package helmchart

import (
	"errors"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/chart"
)

// conditionTypes are the conditions a HelmChart carries, as
// source-controller writes them; the negative ones go after a success.
var conditionTypes = source.Conditions([]string{sourcev1.SourceVerifiedCondition}, sourcev1.BuildFailedCondition)

// applyStatus computes the status from what the phases observed (out) and
// how they ended (err). It reads nothing else and writes nothing else, so it
// is tested without an API server.
func applyStatus(obj *sourcev1.HelmChart, out *outcome, err error) {
	obj.Status.ObservedGeneration = obj.Generation
	if token, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.LastHandledReconcileAt = token
	}
	if out == nil {
		out = &outcome{artifact: obj.Status.Artifact}
	}
	obj.Status.Artifact = out.artifact
	obj.Status.URL = ""
	if out.artifact != nil {
		obj.Status.URL = out.artifact.URL
	}
	if out.sourceRevision != "" {
		obj.Status.ObservedSourceArtifactRevision = out.sourceRevision
	}
	applyVerified(obj, out, err)
	if err != nil {
		applyFailure(obj, out, err)
		return
	}
	b := out.build
	obj.Status.ObservedChartName = b.Name
	obj.Status.ObservedValuesFiles = b.ValuesFiles
	reason := buildReason(b)
	conditions.MarkTrue(obj, sourcev1.ArtifactInStorageCondition, reason, "%s", b.Summary())
	conditions.MarkReady(obj, reason, "%s", b.Summary())
}

// buildReason is Flux's reason for a good build.
func buildReason(b *chart.Build) string {
	if b.Packaged {
		return sourcev1.ChartPackageSucceededReason
	}
	return sourcev1.ChartPullSucceededReason
}

// applyVerified records this run's verification: none without
// spec.verify, True when this run verified the chart, False when it
// failed, and a stale False dropped (Flux recomputes it each run).
func applyVerified(obj *sourcev1.HelmChart, out *outcome, err error) {
	var be *chart.BuildError
	switch {
	case obj.Spec.Verify == nil:
		conditions.Delete(obj, sourcev1.SourceVerifiedCondition)
	case out.verified && out.build != nil:
		conditions.MarkTrue(obj, sourcev1.SourceVerifiedCondition, meta.SucceededReason,
			"verified signature of version %s", out.build.Version)
	case errs.Reason(err, "") == sourcev1.VerificationError,
		errors.As(err, &be) && be.Reason == chart.ErrChartVerification:
		conditions.MarkFalse(obj, sourcev1.SourceVerifiedCondition, sourcev1.VerificationError, "%s", err)
	case !conditions.IsTrue(obj, sourcev1.SourceVerifiedCondition):
		conditions.Delete(obj, sourcev1.SourceVerifiedCondition)
	}
}

func applyFailure(obj *sourcev1.HelmChart, out *outcome, err error) {
	reason := errs.Reason(err, meta.FailedReason)
	switch failedCondition(err) {
	case sourcev1.BuildFailedCondition:
		conditions.Delete(obj, sourcev1.FetchFailedCondition)
		conditions.MarkTrue(obj, sourcev1.BuildFailedCondition, reason, "%s", err)
	case sourcev1.StorageOperationFailedCondition:
		conditions.MarkTrue(obj, sourcev1.StorageOperationFailedCondition, reason, "%s", err)
	default:
		conditions.Delete(obj, sourcev1.BuildFailedCondition)
		conditions.MarkTrue(obj, sourcev1.FetchFailedCondition, reason, "%s", err)
	}
	if b := out.build; b != nil && b.Name != "" && b.Version != "" && obj.Status.Artifact != nil &&
		(b.Name != obj.Status.ObservedChartName || obj.Status.Artifact.Revision != b.Version) {
		conditions.MarkTrue(obj, sourcev1.ArtifactOutdatedCondition, sourcev1.NewChartReason, "%s", b.Summary())
	}
	switch {
	case errs.IsStalling(err):
		conditions.MarkStalled(obj, reason, "%s", err)
	case isWaiting(err):
		// Waiting for the source is progress, not a failure of this spec.
		conditions.Delete(obj, meta.StalledCondition)
		conditions.MarkFalse(obj, meta.ReadyCondition, reason, "%s", err)
		conditions.MarkTrue(obj, meta.ReconcilingCondition, meta.ProgressingReason, "%s", err)
	default:
		conditions.MarkFailed(obj, reason, "%s", err)
	}
}

// failedCondition is the negative condition err belongs under, as Flux
// sorts them: building the chart, writing storage, or fetching.
func failedCondition(err error) string {
	var be *chart.BuildError
	if errors.As(err, &be) {
		switch be.Reason {
		case chart.ErrChartMetadataPatch, chart.ErrValuesFilesMerge, chart.ErrDependencyBuild,
			chart.ErrChartPackage, chart.ErrChartVerification:
			return sourcev1.BuildFailedCondition
		}
		return sourcev1.FetchFailedCondition
	}
	switch errs.Reason(err, "") {
	case sourcev1.ArchiveOperationFailedReason, sourcev1.AcquireLockFailedReason:
		return sourcev1.StorageOperationFailedCondition
	case sourcev1.VerificationError:
		return sourcev1.BuildFailedCondition
	}
	return sourcev1.FetchFailedCondition
}

func isWaiting(err error) bool {
	_, ok := errs.AsWaiting(err)
	return ok
}
