package release

import (
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

func info(status rcommon.Status, chartVersion, config string) *Info {
	return &Info{Name: "app", Namespace: "apps", Version: 3, Status: status, ChartName: "podinfo", ChartVersion: chartVersion, ConfigDigest: config}
}

// want is the desired state every case starts from: podinfo@1.0.0 with
// values digest "c1".
func want(mutate func(*State)) State {
	s := State{ChartName: "podinfo", ChartVersion: "1.0.0", ConfigDigest: "c1", Strategy: helmv2.RollbackRemediationStrategy}
	if mutate != nil {
		mutate(&s)
	}
	return s
}

func TestDecide(t *testing.T) {
	deployed := info(rcommon.StatusDeployed, "1.0.0", "c1")
	tests := []struct {
		name   string
		state  State
		action Action
		reason string
		msg    string
	}{
		{"no release: install", want(nil), ActionInstall, "", ""},
		{"uninstalled with history kept: install", want(func(s *State) { s.Latest = info(rcommon.StatusUninstalled, "1.0.0", "c1") }), ActionInstall, "", ""},
		{"no release, install retries exhausted: stall", want(func(s *State) {
			s.LastAction, s.Failures, s.Exhausted = helmv2.ReleaseActionInstall, 1, true
		}), ActionStall, RetriesExceededReason, "Failed to install after 1 attempt(s)"},
		{"pending-install: unlock", want(func(s *State) { s.Latest = info(rcommon.StatusPendingInstall, "1.0.0", "c1") }), ActionUnlock, "", ""},
		{"pending-upgrade: unlock", want(func(s *State) { s.Latest = info(rcommon.StatusPendingUpgrade, "1.0.0", "c1") }), ActionUnlock, "", ""},
		{"pending-rollback: unlock even when exhausted", want(func(s *State) {
			s.Latest, s.Exhausted, s.Failures = info(rcommon.StatusPendingRollback, "1.0.0", "c1"), true, 3
		}), ActionUnlock, "", ""},
		{"in sync: nothing", want(func(s *State) { s.Latest = deployed }), ActionNone, "", ""},
		{"in sync, forced: upgrade", want(func(s *State) { s.Latest, s.Force = deployed, true }), ActionUpgrade, "", ""},
		{"postRenderers changed: upgrade", want(func(s *State) {
			s.Latest, s.ObservedPostRenderersDigest, s.PostRenderersDigest = deployed, "sha256:a", "sha256:b"
		}), ActionUpgrade, "", "postRenderers digest has changed"},
		{"commonMetadata changed: upgrade", want(func(s *State) {
			s.Latest, s.ObservedCommonMetadataDigest, s.CommonMetadataDigest = deployed, "sha256:a", "sha256:b"
		}), ActionUpgrade, "", "commonMetadata digest has changed"},
		{"no digest observed yet: nothing", want(func(s *State) { s.Latest, s.PostRenderersDigest = deployed, "sha256:b" }), ActionNone, "", ""},
		{"new chart version: upgrade", want(func(s *State) { s.Latest = info(rcommon.StatusDeployed, "0.9.0", "c1") }), ActionUpgrade, "", ""},
		{"new values: upgrade", want(func(s *State) { s.Latest = info(rcommon.StatusDeployed, "1.0.0", "c0") }), ActionUpgrade, "", ""},
		{"out of sync after remediation, exhausted: stall", want(func(s *State) {
			s.Latest = info(rcommon.StatusDeployed, "0.9.0", "c1")
			s.LastAction, s.Failures, s.Exhausted = helmv2.ReleaseActionUpgrade, 2, true
		}), ActionStall, RetriesExceededReason, "Failed to upgrade after 2 attempt(s)"},
		{"superseded as newest (made outside): upgrade", want(func(s *State) { s.Latest = info(rcommon.StatusSuperseded, "1.0.0", "c1") }), ActionUpgrade, "", ""},
		{"chart renamed, Reinstall: uninstall", want(func(s *State) {
			s.Latest, s.ReinstallOnChartRename = deployed, true
			s.ChartName = "other"
		}), ActionUninstall, "", ""},
		{"chart renamed, InPlaceUpdate: upgrade", want(func(s *State) {
			s.Latest = deployed
			s.ChartName = "other"
		}), ActionUpgrade, "", ""},
		{"failed, not counted: upgrade", want(func(s *State) { s.Latest = info(rcommon.StatusFailed, "1.0.0", "c1") }), ActionUpgrade, "", ""},
		{"failed upgrade, retries left: rollback", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures, s.RollbackTarget = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionUpgrade, 1, 2
		}), ActionRollback, "", ""},
		{"failed upgrade, no rollback target: stall", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionUpgrade, 1
		}), ActionStall, MissingRollbackTargetReason, "Failed to perform remediation: missing target release for rollback"},
		{"failed upgrade, uninstall strategy: uninstall", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionUpgrade, 1
			s.Strategy = helmv2.UninstallRemediationStrategy
		}), ActionUninstall, "", ""},
		{"failed install: uninstall", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionInstall, 1
			s.Strategy = helmv2.UninstallRemediationStrategy
		}), ActionUninstall, "", ""},
		{"failed, exhausted, remediate last failure: rollback", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures, s.RollbackTarget = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionUpgrade, 2, 2
			s.Exhausted, s.RemediateLastFailure = true, true
		}), ActionRollback, "", ""},
		{"failed, exhausted: stall", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionUpgrade, 1
			s.Exhausted = true
		}), ActionStall, RetriesExceededReason, "Failed to upgrade after 1 attempt(s)"},
		{"failed, RetryOnFailure: upgrade again", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures, s.RetryOnFailure = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionUpgrade, 1, true
		}), ActionUpgrade, "", ""},
		{"failed, RetryOnFailure ignores the retry count", want(func(s *State) {
			s.Latest, s.LastAction, s.Failures, s.RetryOnFailure = info(rcommon.StatusFailed, "1.0.0", "c1"), helmv2.ReleaseActionUpgrade, 3, true
			s.Exhausted = true
		}), ActionUpgrade, "", ""},
		{"in sync, tests on, not tested: test", want(func(s *State) { s.Latest, s.TestEnable = deployed, true }), ActionTest, "", ""},
		{"in sync, tested: nothing", want(func(s *State) { s.Latest, s.TestEnable, s.Tested = deployed, true, true }), ActionNone, "", ""},
		{"tests failed: remediate", want(func(s *State) {
			s.Latest, s.TestEnable, s.Tested, s.TestsFailed = deployed, true, true, true
			s.LastAction, s.Failures, s.RollbackTarget = helmv2.ReleaseActionUpgrade, 1, 2
		}), ActionRollback, "", ""},
		{"tests failed, ignored: nothing", want(func(s *State) {
			s.Latest, s.TestEnable, s.Tested, s.TestsFailed, s.IgnoreTestFailures = deployed, true, true, true, true
			s.LastAction, s.Failures = helmv2.ReleaseActionUpgrade, 1
		}), ActionNone, "", ""},
		{"tests failed, tests now off: nothing", want(func(s *State) {
			s.Latest, s.Tested, s.TestsFailed = deployed, true, true
		}), ActionNone, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.state)
			if got.Action != tt.action || got.Reason != tt.reason {
				t.Fatalf("Decide = %s (%s: %s), want %s (%s)", got.Action, got.Reason, got.Message, tt.action, tt.reason)
			}
			if tt.msg != "" && got.Message != tt.msg {
				t.Errorf("message = %q, want %q", got.Message, tt.msg)
			}
		})
	}
}
