package release

import (
	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
)

// Desired is the release a HelmRelease asks for.
type Desired struct {
	ChartName    string
	ChartVersion string
	// Revision is status.lastAttemptedRevision: the chart version, with
	// the first 12 hex characters of the OCI artifact digest as build
	// metadata for OCIRepository charts (1.2.3+0123456789ab).
	Revision string
	// OCIDigest is the OCIRepository artifact digest; empty otherwise.
	OCIDigest string
	// ConfigDigest is ValuesDigest of the composed values.
	ConfigDigest string
}

// Gates are the controller's feature gates that change decisions.
type Gates struct {
	// DefaultToRetryOnFailure makes RetryOnFailure the default strategy.
	DefaultToRetryOnFailure bool
}

// NewState assembles Decide's input from the HelmRelease's spec and status
// and the newest release in storage.
func NewState(hr *helmv2.HelmRelease, latest *Info, d Desired, gates Gates) State {
	s := State{
		Latest:                 latest,
		ChartName:              d.ChartName,
		ChartVersion:           d.ChartVersion,
		ConfigDigest:           d.ConfigDigest,
		Force:                  ForceRequested(hr),
		LastAction:             hr.Status.LastAttemptedReleaseAction,
		Strategy:               helmv2.RollbackRemediationStrategy,
		TestEnable:             hr.GetTest().Enable,
		ReinstallOnChartRename: hr.GetUpgrade().GetChartNameChangeStrategy() == helmv2.ChartNameChangeReinstall,

		PostRenderersDigest:          PostRenderersDigest(hr),
		ObservedPostRenderersDigest:  hr.Status.ObservedPostRenderersDigest,
		CommonMetadataDigest:         CommonMetadataDigest(hr),
		ObservedCommonMetadataDigest: hr.Status.ObservedCommonMetadataDigest,
	}
	ignoreTests := hr.GetTest().IgnoreFailures
	if rem := hr.GetActiveRemediation(); rem != nil {
		s.Failures = rem.GetFailureCount(hr)
		s.Exhausted = rem.RetriesExhausted(hr)
		s.RemediateLastFailure = rem.MustRemediateLastFailure()
		s.Strategy = rem.GetStrategy()
		ignoreTests = rem.MustIgnoreTestFailures(ignoreTests)
	}
	s.IgnoreTestFailures = ignoreTests
	s.RetryOnFailure = retryOnFailure(hr, gates)
	if s.RetryOnFailure {
		s.Exhausted = false
	}
	if prev := hr.Status.History.Previous(ignoreTests); prev != nil && prev.Name == hr.GetReleaseName() {
		s.RollbackTarget = prev.Version
	}
	if latest != nil {
		snap := snapshotOf(hr.Status.History, latest)
		s.Tested = latest.TestHooks != nil || snap.HasBeenTested()
		s.TestsFailed = snap.HasTestInPhase("Failed")
		for _, h := range latest.TestHooks {
			if h.Phase == "Failed" {
				s.TestsFailed = true
			}
		}
	}
	return s
}

// retryOnFailure reports whether the last attempted action's strategy is
// RetryOnFailure.
func retryOnFailure(hr *helmv2.HelmRelease, gates Gates) bool {
	name := ""
	switch hr.Status.LastAttemptedReleaseAction {
	case helmv2.ReleaseActionInstall:
		if st := hr.GetInstall().Strategy; st != nil {
			name = st.Name
		}
	case helmv2.ReleaseActionUpgrade:
		if st := hr.GetUpgrade().Strategy; st != nil {
			name = st.Name
		}
	default:
		return false
	}
	if name == "" {
		return gates.DefaultToRetryOnFailure
	}
	return name == string(helmv2.ActionStrategyRetryOnFailure)
}

// snapshotOf finds the history entry of the release revision info.
func snapshotOf(history helmv2.Snapshots, info *Info) *helmv2.Snapshot {
	for _, s := range history {
		if s != nil && s.Name == info.Name && s.Namespace == info.Namespace && s.Version == info.Version {
			return s
		}
	}
	return nil
}

// ForceRequested reports a `reconcile --force` not yet handled: the
// forceAt annotation equals requestedAt and differs from the last handled.
func ForceRequested(hr *helmv2.HelmRelease) bool {
	v, ok := requestToken(hr, meta.ForceRequestAnnotation)
	return ok && v != hr.Status.LastHandledForceAt
}

// ResetFailures clears the failure counters when the desired state changed
// since the last attempt (chart revision, values, generation) or a
// `reconcile --reset` is pending (which it marks handled). It reports
// whether it cleared them.
func ResetFailures(hr *helmv2.HelmRelease, d Desired) bool {
	st := &hr.Status
	changed := st.LastAttemptedRevision != d.Revision || st.LastAttemptedConfigDigest != d.ConfigDigest ||
		st.LastAttemptedGeneration != hr.Generation
	if v, ok := requestToken(hr, meta.ResetRequestAnnotation); ok && v != st.LastHandledResetAt {
		st.LastHandledResetAt = v
		changed = true
	}
	if changed {
		st.ClearFailures()
	}
	return changed
}

// requestToken returns annotation's value when it equals the
// reconcile.fluxcd.io/requestedAt token, as Flux honours force and reset.
func requestToken(hr *helmv2.HelmRelease, annotation string) (string, bool) {
	v, ok := hr.GetAnnotations()[annotation]
	if !ok || v == "" {
		return "", false
	}
	requested, _ := meta.ReconcileAnnotationValue(hr.GetAnnotations())
	return v, v == requested
}
