package release

import (
	"context"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
)

func TestUnverified(t *testing.T) {
	d := Desired{ChartName: "podinfo", ChartVersion: "1.0.0", ConfigDigest: "c1"}
	progress := func(msg string) []metav1.Condition {
		return []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionUnknown, Reason: meta.ProgressingReason, Message: msg}}
	}
	hr := func(action helmv2.ReleaseAction, conds []metav1.Condition, history ...int) *helmv2.HelmRelease {
		obj := &helmv2.HelmRelease{}
		obj.Status.LastAttemptedReleaseAction, obj.Status.Conditions = action, conds
		for _, v := range history {
			obj.Status.History = append(obj.Status.History, &helmv2.Snapshot{Name: "app", Namespace: "apps", Version: v})
		}
		return obj
	}
	installing := progress("Running 'install' action with timeout of 5m0s")
	upgrading := progress("Running 'upgrade' action with timeout of 5m0s")
	tests := []struct {
		name   string
		hr     *helmv2.HelmRelease
		latest *Info
		action Action
		ok     bool
	}{
		{"held install", hr(helmv2.ReleaseActionInstall, installing), info(rcommon.StatusPendingInstall, "1.0.0", "c1"), ActionInstall, true},
		{"install deployed before the hold", hr(helmv2.ReleaseActionInstall, installing), info(rcommon.StatusDeployed, "1.0.0", "c1"), ActionInstall, true},
		{"held upgrade", hr(helmv2.ReleaseActionUpgrade, upgrading, 2), info(rcommon.StatusPendingUpgrade, "1.0.0", "c1"), ActionUpgrade, true},
		{"pending-upgrade of an install: Helm's own, unlocked", hr(helmv2.ReleaseActionInstall, installing), info(rcommon.StatusPendingUpgrade, "1.0.0", "c1"), "", false},
		{"recorded in history: the wait ended", hr(helmv2.ReleaseActionUpgrade, upgrading, 3, 2), info(rcommon.StatusDeployed, "1.0.0", "c1"), "", false},
		{"values changed since", hr(helmv2.ReleaseActionUpgrade, upgrading, 2), info(rcommon.StatusPendingUpgrade, "1.0.0", "c0"), "", false},
		{"chart changed since", hr(helmv2.ReleaseActionUpgrade, upgrading, 2), info(rcommon.StatusPendingUpgrade, "0.9.0", "c1"), "", false},
		{"another action in progress", hr(helmv2.ReleaseActionUpgrade, progress("Running 'rollback' action with timeout of 5m0s"), 2), info(rcommon.StatusDeployed, "1.0.0", "c1"), "", false},
		{"ready, not in progress", hr(helmv2.ReleaseActionInstall, []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: "InstallSucceeded"}}), info(rcommon.StatusDeployed, "1.0.0", "c1"), "", false},
		{"failed revision", hr(helmv2.ReleaseActionInstall, installing), info(rcommon.StatusFailed, "1.0.0", "c1"), "", false},
		{"no release", hr(helmv2.ReleaseActionInstall, installing), nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := Unverified(tt.hr, tt.latest, d)
			if ok != tt.ok || ok && a != tt.action {
				t.Errorf("Unverified = %q, %v; want %q, %v", a, ok, tt.action, tt.ok)
			}
		})
	}
}

func TestWaitStatusJobs(t *testing.T) {
	job := func(conditions ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j", "namespace": "apps", "generation": int64(1)},
			"spec":   map[string]any{"completions": int64(1)},
			"status": map[string]any{"startTime": "2026-12-04T00:00:00Z", "succeeded": int64(1), "failed": int64(0), "conditions": conditions},
		}}
	}
	complete := map[string]any{"type": "Complete", "status": "True"}
	failed := map[string]any{"type": "Failed", "status": "True"}
	tests := []struct {
		name    string
		jobs    bool
		obj     *unstructured.Unstructured
		want    status.Status
		message string
	}{
		{"started, waitForJobs: in progress", true, job(), status.InProgressStatus, "Job in progress"},
		{"complete, waitForJobs: current", true, job(complete), status.CurrentStatus, "Job Completed. succeeded: 1/1"},
		{"failed, waitForJobs", true, job(failed), status.FailedStatus, "Job Failed. failed: 0/1"},
		{"started, no waitForJobs: kstatus says current", false, job(), status.CurrentStatus, "Job in progress. success:1, active: 0, failed: 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := WaitStatus(tt.jobs)(context.Background(), tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.want || res.Message != tt.message {
				t.Errorf("status = %s %q, want %s %q", res.Status, res.Message, tt.want, tt.message)
			}
		})
	}
}

func TestParks(t *testing.T) {
	hook := func(event string) *chartv2.Chart {
		ch := &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "c", Version: "1.0.0"}}
		ch.Templates = []*common.File{{Name: "templates/job.yaml", Data: []byte("metadata:\n  annotations:\n    helm.sh/hook: " + event + "\n")}}
		return ch
	}
	parent := &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "p", Version: "1.0.0"}}
	parent.AddDependency(hook("post-upgrade"))
	legacy := &helmv2.WaitStrategy{Name: helmv2.WaitStrategyLegacy}
	tests := []struct {
		name   string
		opts   Options
		spec   helmv2.HelmReleaseSpec
		chart  *chartv2.Chart
		action Action
		want   bool
	}{
		{"poller install", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{}, hook("pre-install"), ActionInstall, true},
		{"parking off", Options{}, helmv2.HelmReleaseSpec{}, nil, ActionInstall, false},
		{"legacy strategy", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{WaitStrategy: legacy}, nil, ActionInstall, false},
		{"UseHelm3Defaults: legacy by default", Options{ParkWaits: true, UseHelm3Defaults: true}, helmv2.HelmReleaseSpec{}, nil, ActionInstall, false},
		{"disableWait", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{Install: &helmv2.Install{DisableWait: true}}, nil, ActionInstall, false},
		{"post-install hook", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{}, hook("post-install"), ActionInstall, false},
		{"post-install hook, hooks disabled", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{Install: &helmv2.Install{DisableHooks: true}}, hook("post-install"), ActionInstall, true},
		{"post-upgrade hook of a dependency", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{}, parent, ActionUpgrade, false},
		{"post-upgrade hook on install", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{}, parent, ActionInstall, true},
		{"cleanupOnFail", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{Upgrade: &helmv2.Upgrade{CleanupOnFail: true}}, nil, ActionUpgrade, false},
		{"healthCheckExprs", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{HealthCheckExprs: []meta.HealthCheckExpressions{{}}}, nil, ActionInstall, false},
		{"rollback", Options{ParkWaits: true}, helmv2.HelmReleaseSpec{}, nil, ActionRollback, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{opts: tt.opts}
			if got := c.Parks(&helmv2.HelmRelease{Spec: tt.spec}, tt.chart, tt.action); got != tt.want {
				t.Errorf("Parks = %v, want %v", got, tt.want)
			}
		})
	}
}
