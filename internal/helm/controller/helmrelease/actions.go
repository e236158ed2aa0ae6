package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// pendingReleaseReason is Flux's reason for an unlocked release.
const pendingReleaseReason = "PendingRelease"

// Each action runs one Helm SDK call, records what it wrote into
// status.history and reports it with Flux's condition, reason and message.
// An action returns nil to let the state machine decide again, or an error
// that ends this reconcile.

func (x *run) install(ctx context.Context, latest *release.Info) error {
	x.obj.Status.LastAttemptedReleaseAction = helmv2.ReleaseActionInstall
	replace := latest != nil && latest.Status == rcommon.StatusUninstalled
	started := time.Now()
	parks := x.parksWait(release.ActionInstall)
	rel, err := x.helm.Install(ctx, x.obj, x.chart.chart, x.values, replace)
	if err == nil && parks {
		return x.park(ctx, rel, release.ActionInstall, "")
	}
	if err == nil {
		err = x.customHealth(ctx, rel, release.ActionInstall, started, x.obj.GetInstall().DisableWait)
	}
	return x.released(ctx, "install", err, x.lastWritten("install", rel), started)
}

func (x *run) upgrade(ctx context.Context) error {
	x.obj.Status.LastAttemptedReleaseAction = helmv2.ReleaseActionUpgrade
	started := time.Now()
	parks := x.parksWait(release.ActionUpgrade)
	previous := ""
	if prev := x.obj.Status.History.Latest(); prev != nil {
		previous = prev.Status
	}
	rel, err := x.helm.Upgrade(ctx, x.obj, x.chart.chart, x.values)
	if err == nil && parks {
		return x.park(ctx, rel, release.ActionUpgrade, previous)
	}
	if err == nil {
		err = x.customHealth(ctx, rel, release.ActionUpgrade, started, x.obj.GetUpgrade().DisableWait)
	}
	return x.released(ctx, "upgrade", err, x.lastWritten("upgrade", rel), started)
}

// parksWait reports whether action a runs without Helm's waiter, its
// wait parked (parked.go): not when its progress could not be written,
// which is how a restarted controller would find the wait.
func (x *run) parksWait(a release.Action) bool {
	x.helm.SetParkWaits(x.shown && x.r.parks(x.obj))
	return x.helm.Parks(x.obj, x.chart.chart, a)
}

// test runs the test hooks; a failure counts towards the active
// remediation unless failures are ignored. It never ends the drive loop:
// the next decision reads the result.
func (x *run) test(ctx context.Context, latest *release.Info) {
	rel, err := x.helm.Test(ctx, x.obj)
	x.recordWritten("")
	info := latest
	if rel != nil {
		info = release.InfoOf(rel)
	}
	// A chart without tests has been tested too: record an empty result.
	hooks := info.TestHooks
	if hooks == nil {
		hooks = map[string]*helmv2.TestHookStatus{}
	}
	for _, s := range x.obj.Status.History {
		if s.Name == info.Name && s.Version == info.Version {
			s.SetTestHooks(hooks)
		}
	}
	if err != nil {
		msg := fmt.Sprintf("Helm test failed for release %s with chart %s: %s", info.FullName(), info.VersionedChart(), strings.TrimSpace(err.Error()))
		x.failed(ctx, helmv2.TestSuccessCondition, helmv2.TestFailedReason, info, msg)
		rem := x.obj.GetActiveRemediation()
		if rem != nil && !rem.MustIgnoreTestFailures(x.obj.GetTest().IgnoreFailures) {
			rem.IncrementFailureCount(x.obj)
		}
		return
	}
	result := "no test hooks"
	if n := len(hooks); n > 0 {
		result = fmt.Sprintf("%d test hook(s) completed successfully", n)
	}
	x.succeeded(ctx, helmv2.TestSuccessCondition, helmv2.TestSucceededReason, info,
		fmt.Sprintf("Helm test succeeded for release %s with chart %s: %s", info.FullName(), info.VersionedChart(), result))
}

// rollback remediates by returning to the previous successful release.
func (x *run) rollback(ctx context.Context, latest *release.Info) error {
	prev := x.obj.Status.History.Previous(x.ignoreTests())
	err := x.helm.Rollback(ctx, x.obj, prev.Version)
	x.recordWritten("rollback")
	if err != nil {
		msg := fmt.Sprintf("Helm rollback to previous release %s with chart %s failed: %s", prev.FullReleaseName(), prev.VersionedChartName(), strings.TrimSpace(err.Error()))
		x.failed(ctx, helmv2.RemediatedCondition, helmv2.RollbackFailedReason, latest, msg)
		return &errs.Generic{Err: errors.New(msg), Reason: helmv2.RollbackFailedReason}
	}
	x.succeeded(ctx, helmv2.RemediatedCondition, helmv2.RollbackSucceededReason, latest,
		fmt.Sprintf("Helm rollback to previous release %s with chart %s succeeded", prev.FullReleaseName(), prev.VersionedChartName()))
	return nil
}

// uninstall remediates a failed install (or upgrade with the uninstall
// strategy), or makes way for a renamed chart.
func (x *run) uninstall(ctx context.Context, latest *release.Info) error {
	err := x.helm.Uninstall(ctx, x.obj)
	x.recordWritten("uninstall")
	if err != nil {
		msg := fmt.Sprintf("Helm uninstall failed for release %s with chart %s: %s", latest.FullName(), latest.VersionedChart(), strings.TrimSpace(err.Error()))
		x.failed(ctx, helmv2.RemediatedCondition, helmv2.UninstallFailedReason, latest, msg)
		return &errs.Generic{Err: errors.New(msg), Reason: helmv2.UninstallFailedReason}
	}
	if !x.obj.GetUninstall().KeepHistory {
		x.obj.Status.ClearHistory()
	}
	x.succeeded(ctx, helmv2.RemediatedCondition, helmv2.UninstallSucceededReason, latest,
		fmt.Sprintf("Helm uninstall succeeded for release %s with chart %s", latest.FullName(), latest.VersionedChart()))
	return nil
}

// unlock recovers a release a killed controller left pending.
func (x *run) unlock(ctx context.Context, latest *release.Info) error {
	stuck, err := x.helm.Unlock()
	x.recordWritten("")
	if err != nil {
		msg := fmt.Sprintf("Unlock of Helm release %s with chart %s in %s state failed: %s", latest.FullName(), latest.VersionedChart(), stuck, strings.TrimSpace(err.Error()))
		x.failed(ctx, helmv2.ReleasedCondition, pendingReleaseReason, latest, msg)
		return &errs.Generic{Err: errors.New(msg), Reason: pendingReleaseReason}
	}
	msg := fmt.Sprintf("Unlocked Helm release %s with chart %s in %s state", latest.FullName(), latest.VersionedChart(), stuck)
	conditions.MarkFalse(x.obj, helmv2.ReleasedCondition, pendingReleaseReason, "%s", msg)
	x.r.Events.Normal(ctx, x.obj, pendingReleaseReason, x.eventMeta(latest), "%s", msg)
	return nil
}

// ignoreTests says whether failed tests are ignored by the active
// remediation (or spec.test).
func (x *run) ignoreTests() bool {
	ignore := x.obj.GetTest().IgnoreFailures
	if rem := x.obj.GetActiveRemediation(); rem != nil {
		ignore = rem.MustIgnoreTestFailures(ignore)
	}
	return ignore
}
