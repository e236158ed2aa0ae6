package release

import (
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
)

func failingUpgrade(failures int64, retries int) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "apps", Generation: 2}}
	hr.Spec.Upgrade = &helmv2.Upgrade{Remediation: &helmv2.UpgradeRemediation{Retries: retries}}
	hr.Status.LastAttemptedReleaseAction = helmv2.ReleaseActionUpgrade
	hr.Status.UpgradeFailures = failures
	hr.Status.History = helmv2.Snapshots{snap(2, "failed"), snap(1, "superseded")}
	return hr
}

func TestNewStateFailedUpgrade(t *testing.T) {
	latest := &Info{Name: "app", Namespace: "apps", Version: 2, Status: rcommon.StatusFailed, ChartName: "podinfo", ChartVersion: "1.0.0"}
	d := Desired{ChartName: "podinfo", ChartVersion: "1.0.0"}
	tests := []struct {
		name     string
		hr       *helmv2.HelmRelease
		action   Action
		failures int64
	}{
		{"first failure, one retry: roll back", failingUpgrade(1, 1), ActionRollback, 1},
		{"second failure: last remediation still rolls back", failingUpgrade(2, 1), ActionRollback, 2},
		{"retries 0: stall without remediation (Flux's default)", failingUpgrade(1, 0), ActionStall, 1},
		{"negative retries never exhaust", failingUpgrade(9, -1), ActionRollback, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState(tt.hr, latest, d, Gates{})
			if s.Failures != tt.failures || s.RollbackTarget != 1 {
				t.Errorf("state: failures %d, rollback target %d", s.Failures, s.RollbackTarget)
			}
			if got := Decide(s).Action; got != tt.action {
				t.Errorf("Decide = %s, want %s", got, tt.action)
			}
		})
	}
}

func TestNewStateRetryOnFailureGate(t *testing.T) {
	hr := failingUpgrade(1, 0)
	if NewState(hr, nil, Desired{}, Gates{}).RetryOnFailure {
		t.Error("RetryOnFailure without strategy or gate")
	}
	if !NewState(hr, nil, Desired{}, Gates{DefaultToRetryOnFailure: true}).RetryOnFailure {
		t.Error("DefaultToRetryOnFailure ignored")
	}
	if NewState(hr, nil, Desired{}, Gates{DefaultToRetryOnFailure: true}).Exhausted {
		t.Error("RetryOnFailure exhausted")
	}
	hr.Spec.Upgrade.Strategy = &helmv2.UpgradeStrategy{Name: string(helmv2.ActionStrategyRemediateOnFailure)}
	if NewState(hr, nil, Desired{}, Gates{DefaultToRetryOnFailure: true}).RetryOnFailure {
		t.Error("explicit RemediateOnFailure overridden by the gate")
	}
}

func TestResetFailures(t *testing.T) {
	d := Desired{Revision: "1.0.0", ConfigDigest: "sha256:a"}
	attempted := func() *helmv2.HelmRelease {
		hr := failingUpgrade(2, 1)
		hr.Status.Failures, hr.Status.LastAttemptedGeneration = 3, 2
		hr.Status.LastAttemptedRevision, hr.Status.LastAttemptedConfigDigest = "1.0.0", "sha256:a"
		return hr
	}
	tests := []struct {
		name   string
		change func(*helmv2.HelmRelease, *Desired)
		reset  bool
	}{
		{"same desired state keeps counters", nil, false},
		{"new chart revision", func(_ *helmv2.HelmRelease, d *Desired) { d.Revision = "1.0.1" }, true},
		{"new values", func(_ *helmv2.HelmRelease, d *Desired) { d.ConfigDigest = "sha256:b" }, true},
		{"new generation", func(hr *helmv2.HelmRelease, _ *Desired) { hr.Generation = 3 }, true},
		{"reset request", func(hr *helmv2.HelmRelease, _ *Desired) {
			hr.Annotations = map[string]string{meta.ReconcileRequestAnnotation: "t1", meta.ResetRequestAnnotation: "t1"}
		}, true},
		{"reset request already handled", func(hr *helmv2.HelmRelease, _ *Desired) {
			hr.Annotations = map[string]string{meta.ReconcileRequestAnnotation: "t1", meta.ResetRequestAnnotation: "t1"}
			hr.Status.LastHandledResetAt = "t1"
		}, false},
		{"reset not matching requestedAt", func(hr *helmv2.HelmRelease, _ *Desired) {
			hr.Annotations = map[string]string{meta.ReconcileRequestAnnotation: "t2", meta.ResetRequestAnnotation: "t1"}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr, want := attempted(), d
			if tt.change != nil {
				tt.change(hr, &want)
			}
			got := ResetFailures(hr, want)
			if got != tt.reset || (hr.Status.UpgradeFailures == 0) != tt.reset || (hr.Status.Failures == 0) != tt.reset {
				t.Errorf("reset = %v, counters %d/%d", got, hr.Status.UpgradeFailures, hr.Status.Failures)
			}
		})
	}
}
