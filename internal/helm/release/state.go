package release

import (
	"fmt"

	rcommon "helm.sh/helm/v4/pkg/release/common"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// Action is the next step the state machine takes.
type Action string

// The actions, one file each.
const (
	// ActionNone: the release is in sync (same chart version and values,
	// deployed, tested when tests are on).
	ActionNone Action = "none"
	// ActionInstall: there is no release (or only an uninstalled one).
	ActionInstall Action = "install"
	// ActionUpgrade: the deployed release differs from the desired state.
	ActionUpgrade Action = "upgrade"
	// ActionTest: the release is in sync but its tests have not run.
	ActionTest Action = "test"
	// ActionRollback: remediate a failed upgrade by rolling back.
	ActionRollback Action = "rollback"
	// ActionUninstall: remediate a failed install (or upgrade with the
	// uninstall strategy), or make way for a chart of another name.
	ActionUninstall Action = "uninstall"
	// ActionUnlock: a controller died while writing the release, which it
	// left pending; mark it failed so Helm accepts the next action.
	ActionUnlock Action = "unlock"
	// ActionStall: retries are exhausted or there is nothing to roll back
	// to; nothing more happens until the spec changes or a reset.
	ActionStall Action = "stall"
)

// Stall reasons, as Flux writes them.
const (
	// RetriesExceededReason: the active remediation's retries are used up.
	RetriesExceededReason = "RetriesExceeded"
	// MissingRollbackTargetReason: a rollback is due but no earlier
	// successful release is known.
	MissingRollbackTargetReason = "MissingRollbackTarget"
)

// State is everything Decide reads: the newest release in storage and what
// the HelmRelease wants and has been through.
type State struct {
	// Latest is the newest revision in storage; nil when there is none.
	Latest *Info
	// Chart name and version, and values digest, wanted.
	ChartName, ChartVersion, ConfigDigest string
	// Force is a pending `reconcile --force` request: upgrade even if in
	// sync.
	Force bool

	// LastAction is status.lastAttemptedReleaseAction.
	LastAction helmv2.ReleaseAction
	// Failures of the active remediation (install or upgrade failures).
	Failures int64
	// Exhausted: the active remediation's retries are used up.
	Exhausted bool
	// RemediateLastFailure: remediate once more when exhausted.
	RemediateLastFailure bool
	// Strategy of the active remediation: rollback or uninstall.
	Strategy helmv2.RemediationStrategy
	// RetryOnFailure is the action strategy: retry at the retry interval
	// instead of remediating, for as long as it takes (the remediation's
	// retries do not apply).
	RetryOnFailure bool
	// RollbackTarget is the revision a rollback returns to; 0 when there
	// is none.
	RollbackTarget int

	// Test settings: tests enabled, whether Latest has been tested and
	// failed, and whether failed tests count.
	TestEnable, Tested, TestsFailed, IgnoreTestFailures bool
	// ReinstallOnChartRename is chartNameChangeStrategy Reinstall.
	ReinstallOnChartRename bool

	// PostRenderersDigest and CommonMetadataDigest are the digests of the
	// spec's post-renderers and common metadata; the Observed ones those
	// of the last release in sync ("" before the first).
	PostRenderersDigest, ObservedPostRenderersDigest   string
	CommonMetadataDigest, ObservedCommonMetadataDigest string
}

// Decision is Decide's answer: the action and, for logs, events and a
// stall's condition, why.
type Decision struct {
	Action Action
	// Reason is a stall's condition reason.
	Reason string
	// Message says why, in words for a person.
	Message string
}

// InSync reports whether the deployed Latest matches the desired chart and
// values.
func (s State) InSync() bool {
	l := s.Latest
	return l != nil && l.Status == rcommon.StatusDeployed &&
		l.ChartName == s.ChartName && l.ChartVersion == s.ChartVersion && l.ConfigDigest == s.ConfigDigest
}

// Decide returns the next action for s. It is pure: the same state gives
// the same decision, which is what lets the controller loop observe →
// decide → act until the answer is none or stall.
func Decide(s State) Decision {
	l := s.Latest
	switch {
	case l.Pending():
		return Decision{Action: ActionUnlock, Message: fmt.Sprintf("release %s is stuck in %s", l.FullName(), l.Status)}
	case l == nil || l.Status == rcommon.StatusUninstalled:
		if s.Exhausted {
			return s.stall()
		}
		return Decision{Action: ActionInstall, Message: "no release in storage"}
	case s.ReinstallOnChartRename && l.ChartName != s.ChartName:
		return Decision{Action: ActionUninstall, Message: fmt.Sprintf("chart name changed from %s to %s", l.ChartName, s.ChartName)}
	case s.failed():
		return s.remediate()
	case l.Status != rcommon.StatusDeployed:
		// superseded, unknown or uninstalling as newest: a release made
		// outside the controller's view; a new revision settles it.
		return s.upgrade(fmt.Sprintf("release is %s", l.Status))
	case !s.InSync():
		return s.upgrade("release is out of sync with the desired state")
	case changed(s.ObservedPostRenderersDigest, s.PostRenderersDigest):
		return s.upgrade("postRenderers digest has changed")
	case changed(s.ObservedCommonMetadataDigest, s.CommonMetadataDigest):
		return s.upgrade("commonMetadata digest has changed")
	case s.Force:
		return s.upgrade("forced upgrade requested")
	case s.TestEnable && !s.Tested:
		return Decision{Action: ActionTest, Message: "release has not been tested"}
	default:
		return Decision{Action: ActionNone, Message: "release is in sync"}
	}
}

// failed: the newest release failed, or its tests failed and count.
func (s State) failed() bool {
	l := s.Latest
	if l.Status == rcommon.StatusFailed {
		return true
	}
	return l.Status == rcommon.StatusDeployed && s.TestEnable && s.TestsFailed && !s.IgnoreTestFailures && s.InSync()
}

func (s State) upgrade(why string) Decision {
	if s.Exhausted {
		return s.stall()
	}
	return Decision{Action: ActionUpgrade, Message: why}
}

// remediate decides for a failed release.
func (s State) remediate() Decision {
	switch {
	case s.Failures <= 0:
		// Not a failure of this desired state (counters were reset by a
		// change, or the release failed outside the controller): try it.
		return Decision{Action: ActionUpgrade, Message: "release failed before this desired state; retrying"}
	case s.RetryOnFailure:
		return Decision{Action: ActionUpgrade, Message: "retrying the failed release (RetryOnFailure)"}
	case s.Exhausted && !s.RemediateLastFailure:
		return s.stall()
	case s.Strategy == helmv2.UninstallRemediationStrategy:
		return Decision{Action: ActionUninstall, Message: "remediating the failed release by uninstalling it"}
	case s.RollbackTarget > 0:
		return Decision{Action: ActionRollback, Message: fmt.Sprintf("remediating the failed release by rolling back to v%d", s.RollbackTarget)}
	default:
		return Decision{Action: ActionStall, Reason: MissingRollbackTargetReason,
			Message: "Failed to perform remediation: missing target release for rollback"}
	}
}

func (s State) stall() Decision {
	action := s.LastAction
	if action == "" {
		action = helmv2.ReleaseActionInstall
	}
	return Decision{Action: ActionStall, Reason: RetriesExceededReason,
		Message: fmt.Sprintf("Failed to %s after %d attempt(s)", action, s.Failures)}
}

// changed reports a digest that differs from the one observed; nothing
// observed yet (a release from before the field, or adopted) is no change.
func changed(observed, desired string) bool { return observed != "" && observed != desired }
