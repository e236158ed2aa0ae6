package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// maxSteps bounds the actions of one reconcile. The longest legitimate run
// is unlock, upgrade, test, rollback, upgrade, rollback.
const maxSteps = 10

// run is one reconcile's drive of the state machine.
type run struct {
	r       *Reconciler
	obj     *helmv2.HelmRelease
	helm    *release.Client
	chart   *loadedChart
	values  map[string]any
	desired release.Desired
	// shown: the progress of the action under way is in the API server.
	shown bool
}

// drive loops observe → decide → act until the release is in sync, stalls
// or an action fails in a way that needs a later retry.
func (x *run) drive(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx)
	for range maxSteps {
		latest, err := x.helm.Observe()
		if err != nil {
			return &errs.Generic{Err: err, Reason: helmv2.GetLastReleaseFailedReason}
		}
		if w, err := x.resumable(latest); err != nil || w != nil {
			if err == nil {
				err = x.judge(ctx, w)
			}
			if err != nil {
				return err
			}
			continue
		}
		x.record(latest, "")
		d := release.Decide(release.NewState(x.obj, latest, x.desired, release.Gates{DefaultToRetryOnFailure: x.r.Options.DefaultToRetryOnFailure}))
		log.V(1).Info("next Helm action", "action", d.Action, "why", d.Message)
		x.shown = d.Action.Acts() && x.progress(ctx, d.Action)
		var next error
		switch d.Action {
		case release.ActionNone:
			if release.ForceRequested(x.obj) {
				x.obj.Status.LastHandledForceAt = x.obj.GetAnnotations()["reconcile.fluxcd.io/forceAt"]
			}
			x.observeRendering()
			return x.inSync(ctx, latest)
		case release.ActionStall:
			return &errs.Stalling{Err: errors.New(stallMessage(x.obj, d)), Reason: d.Reason}
		case release.ActionUnlock:
			next = x.unlock(ctx, latest)
		case release.ActionInstall:
			next = x.install(ctx, latest)
		case release.ActionUpgrade:
			next = x.upgrade(ctx)
		case release.ActionTest:
			x.test(ctx, latest)
		case release.ActionRollback:
			next = x.rollback(ctx, latest)
		case release.ActionUninstall:
			next = x.uninstall(ctx, latest)
		}
		if next != nil {
			return next
		}
	}
	return &errs.Generic{Err: fmt.Errorf("release did not settle after %d Helm actions", maxSteps), Reason: helmv2.ReconciliationFailedReason}
}

// progress shows the action about to run, as Flux words it, so that a
// long install or upgrade does not keep showing the previous Ready state.
// A failed status write is logged: the action runs anyway, but cannot
// park its wait, which a restarted controller finds by this status
// (release.Unverified).
func (x *run) progress(ctx context.Context, a release.Action) bool {
	if err := reconcile.ProgressUnknown(ctx, x.obj, "Running '%s' action with timeout of %s", a, release.ActionTimeout(x.obj, a)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "showing progress")
		return false
	}
	return true
}

// stallMessage is Flux's message, followed by what to do about it.
func stallMessage(obj *helmv2.HelmRelease, d release.Decision) string {
	if d.Reason != release.RetriesExceededReason {
		return d.Message
	}
	return fmt.Sprintf("%s; fix the cause, then run 'weir reconcile hr %s -n %s --reset'", d.Message, obj.Name, obj.Namespace)
}

// record writes a release revision into status.history.
func (x *run) record(info *release.Info, action string) {
	if info == nil || info.Name != x.obj.GetReleaseName() {
		return
	}
	s := info.Snapshot(action, x.ociDigestFor(info))
	ignoreTests := x.obj.GetTest().IgnoreFailures
	x.obj.Status.History = release.Record(x.obj.Status.History, s, x.obj.GetMaxHistory(), ignoreTests)
}

// ociDigestFor is the OCI digest of a revision made from this chart.
func (x *run) ociDigestFor(info *release.Info) string {
	if info.ChartVersion == x.desired.ChartVersion {
		return x.desired.OCIDigest
	}
	return ""
}

// recordWritten puts every release the last action wrote into history,
// and returns the newest.
func (x *run) recordWritten(action string) *release.Info {
	var newest *release.Info
	for _, rel := range x.helm.Written() {
		info := release.InfoOf(rel)
		a := ""
		if newest == nil || info.Version > newest.Version {
			a = action
		}
		x.record(info, a)
		if newest == nil || info.Version >= newest.Version {
			newest = info
		}
	}
	return newest
}

// eventMeta is the metadata Flux puts on release events.
func (x *run) eventMeta(info *release.Info) map[string]string {
	md := map[string]string{"revision": x.desired.ChartVersion}
	if info != nil {
		md["revision"] = info.ChartVersion
		if info.AppVersion != "" {
			md["app-version"] = info.AppVersion
		}
	}
	if x.desired.OCIDigest != "" {
		md["oci-digest"] = x.desired.OCIDigest
	}
	return md
}

// failed counts a failed action and reports it on condition t.
func (x *run) failed(ctx context.Context, t, reason string, info *release.Info, msg string) {
	x.obj.Status.Failures++
	conditions.MarkFalse(x.obj, t, reason, "%s", msg)
	x.r.Events.Warning(ctx, x.obj, reason, x.eventMeta(info), "%s", msg)
}

// succeeded reports a successful action on condition t.
func (x *run) succeeded(ctx context.Context, t, reason string, info *release.Info, msg string) {
	conditions.MarkTrue(x.obj, t, reason, "%s", msg)
	x.r.Events.Normal(ctx, x.obj, reason, x.eventMeta(info), "%s", msg)
}

// released handles the end of an install or upgrade: a release that
// failed and was written counts towards the active remediation; one that
// wrote nothing is retried with backoff as it changed nothing. The
// action's duration, from started, is recorded either way.
func (x *run) released(ctx context.Context, verb string, err error, written *release.Info, started time.Time) error {
	x.obj.Status.LastAttemptedReleaseActionDuration = &metav1.Duration{Duration: x.now().Sub(started).Round(time.Millisecond)}
	ok, ko := helmv2.InstallSucceededReason, helmv2.InstallFailedReason
	if verb == "upgrade" {
		ok, ko = helmv2.UpgradeSucceededReason, helmv2.UpgradeFailedReason
	}
	if err != nil {
		msg := fmt.Sprintf("Helm %s failed for release %s/%s with chart %s@%s: %s", verb,
			x.obj.GetReleaseNamespace(), x.obj.GetReleaseName(), x.desired.ChartName, x.desired.ChartVersion, strings.TrimSpace(err.Error()))
		x.failed(ctx, helmv2.ReleasedCondition, ko, written, msg)
		if written == nil || written.Pending() {
			return &errs.Generic{Err: errors.New(msg), Reason: ko}
		}
		x.obj.GetActiveRemediation().IncrementFailureCount(x.obj)
		if release.NewState(x.obj, written, x.desired, release.Gates{DefaultToRetryOnFailure: x.r.Options.DefaultToRetryOnFailure}).RetryOnFailure {
			return &errs.Generic{Err: errors.New(msg), Reason: ko, RetryAfter: x.retryInterval()}
		}
		return nil
	}
	x.observeRendering()
	msg := fmt.Sprintf("Helm %s succeeded for release %s with chart %s", verb, written.FullName(), written.VersionedChart())
	conditions.Delete(x.obj, helmv2.RemediatedCondition)
	x.succeeded(ctx, helmv2.ReleasedCondition, ok, written, msg)
	x.obj.Status.LastReleaseRevision = written.Version
	if x.obj.GetTest().Enable {
		conditions.MarkUnknown(x.obj, helmv2.TestSuccessCondition, "AwaitingTests",
			"Helm release %s with chart %s is awaiting tests", written.FullName(), written.VersionedChart())
	} else {
		conditions.Delete(x.obj, helmv2.TestSuccessCondition)
	}
	return nil
}

// observeRendering records the post-renderers and common metadata the
// release in storage was rendered with; a change to either upgrades.
func (x *run) observeRendering() {
	x.obj.Status.ObservedPostRenderersDigest = release.PostRenderersDigest(x.obj)
	x.obj.Status.ObservedCommonMetadataDigest = release.CommonMetadataDigest(x.obj)
}

// retryInterval is the RetryOnFailure strategy's interval of the last
// attempted action.
func (x *run) retryInterval() time.Duration {
	if x.obj.Status.LastAttemptedReleaseAction == helmv2.ReleaseActionInstall {
		if st := x.obj.GetInstall().Strategy; st != nil {
			return st.GetRetryInterval()
		}
	} else if st := x.obj.GetUpgrade().Strategy; st != nil {
		return st.GetRetryInterval()
	}
	return helmv2.DefaultRetryInterval
}

// lastWritten is what an action wrote, or the release now in storage.
func (x *run) lastWritten(action string, rel *releasev1.Release) *release.Info {
	written := x.recordWritten(action)
	if written == nil && rel != nil {
		written = release.InfoOf(rel)
		x.record(written, action)
	}
	return written
}
