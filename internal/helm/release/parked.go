package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// A parked wait is the wait of an install or upgrade that Helm runs
// without its own waiter: the controller judges the release's objects by
// kstatus afterwards, between reconciles, and writes what Helm's waiter
// would have written when the wait ends (docs/design/0030).

// Parks reports whether action a (install or upgrade) of hr with chart
// chrt runs without Helm's waiter, its wait parked: the client parks
// waits (Options.ParkWaits), the action waits with Helm 4's kstatus
// watcher (the poller; legacy's readiness rules are not kstatus's), and
// nothing Helm does after its wait depends on it: no post-install or
// post-upgrade hook (they run after the wait), no cleanupOnFail (deletes
// what the failed upgrade created), no healthCheckExprs (judged after
// Helm's wait, customHealth).
func (c *Client) Parks(hr *helmv2.HelmRelease, chrt *chartv2.Chart, a Action) bool {
	if !c.opts.ParkWaits || len(hr.Spec.HealthCheckExprs) > 0 {
		return false
	}
	var disableWait, disableHooks bool
	switch a {
	case ActionInstall:
		spec := hr.GetInstall()
		disableWait, disableHooks = spec.DisableWait, spec.DisableHooks
	case ActionUpgrade:
		spec := hr.GetUpgrade()
		if spec.CleanupOnFail {
			return false
		}
		disableWait, disableHooks = spec.DisableWait, spec.DisableHooks
	default:
		return false
	}
	if disableWait || c.waitStrategy(hr, false) != kube.StatusWatcherStrategy {
		return false
	}
	return disableHooks || !hasHook(chrt, postHook(a))
}

// SetParkWaits says whether the next install or upgrade may park its
// wait (Options.ParkWaits).
func (c *Client) SetParkWaits(on bool) { c.opts.ParkWaits = on }

// WaitsForJobs reports whether action a of hr waits for Jobs to complete
// (spec.install/upgrade.disableWaitForJobs unset).
func WaitsForJobs(hr *helmv2.HelmRelease, a Action) bool {
	if a == ActionUpgrade {
		return !hr.GetUpgrade().DisableWaitForJobs
	}
	return !hr.GetInstall().DisableWaitForJobs
}

func postHook(a Action) string {
	if a == ActionUpgrade {
		return string(releasev1.HookPostUpgrade)
	}
	return string(releasev1.HookPostInstall)
}

// hasHook reports whether a template of chrt or of its dependencies may
// declare a hook of event: a template naming both the hook annotation and
// the event. A false positive only keeps Helm's own waiter.
func hasHook(chrt *chartv2.Chart, event string) bool {
	if chrt == nil {
		return false
	}
	for _, t := range chrt.Templates {
		if bytes.Contains(t.Data, []byte("helm.sh/hook")) && bytes.Contains(t.Data, []byte(event)) {
			return true
		}
	}
	for _, dep := range chrt.Dependencies() {
		if hasHook(dep, event) {
			return true
		}
	}
	return false
}

// WaitedFor returns the objects of rel that Helm's kstatus waiter judges,
// in the manifest's order: every object but a paused Deployment, which
// Helm skips.
func WaitedFor(rel *releasev1.Release, namespaced func(runtime.Object) (bool, error)) ([]ssa.ObjMetadata, error) {
	objs, err := ManifestObjects(rel, namespaced)
	if err != nil {
		return nil, err
	}
	out := make([]ssa.ObjMetadata, 0, len(objs))
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
			if paused, _, _ := unstructured.NestedBool(o.Object, "spec", "paused"); paused {
				continue
			}
		}
		out = append(out, ssa.ObjMetadataOf(o))
	}
	return out, nil
}

// WaitStatus is how Helm's waiter judges an object: kstatus, except that
// with waitForJobs a Job is Current only once complete (Helm's own Job
// reader; kstatus calls a started Job Current).
func WaitStatus(waitForJobs bool) ssa.StatusFunc {
	return func(ctx context.Context, obj *unstructured.Unstructured) (*status.Result, error) {
		if !waitForJobs || obj.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "batch", Kind: "Job"}) {
			return ssa.KStatus(ctx, obj)
		}
		return jobStatus(obj)
	}
}

// jobStatus is Helm's Job rule: Complete is Current, Failed is Failed,
// anything else is in progress.
func jobStatus(obj *unstructured.Unstructured) (*status.Result, error) {
	content := obj.UnstructuredContent()
	parallelism := status.GetIntField(content, ".spec.parallelism", 1)
	completions := status.GetIntField(content, ".spec.completions", parallelism)
	withConditions, err := status.GetObjectWithConditions(content)
	if err != nil {
		return nil, err
	}
	for _, c := range withConditions.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case "Complete":
			succeeded := status.GetIntField(content, ".status.succeeded", 0)
			return &status.Result{Status: status.CurrentStatus, Message: fmt.Sprintf("Job Completed. succeeded: %d/%d", succeeded, completions)}, nil
		case "Failed":
			failed := status.GetIntField(content, ".status.failed", 0)
			return &status.Result{Status: status.FailedStatus, Message: fmt.Sprintf("Job Failed. failed: %d/%d", failed, completions)}, nil
		}
	}
	return &status.Result{Status: status.InProgressStatus, Message: "Job in progress"}, nil
}

// WaitTimedOut is the error Helm's kstatus waiter returns when its
// timeout passes: a line per object of objects (in their order) still
// pending in h, with its last status and message, then the context's
// error.
func WaitTimedOut(objects []ssa.ObjMetadata, h *ssa.Health) error {
	pending := map[ssa.ObjMetadata]bool{}
	for _, id := range h.Pending() {
		pending[id] = true
	}
	var errs []error
	for _, id := range objects {
		if !pending[id] {
			continue
		}
		st, msg := status.UnknownStatus, ""
		if res := h.Last(id); res != nil {
			st, msg = res.Status, res.Message
			if st == status.NotFoundStatus {
				msg = "Resource not found"
			}
		}
		errs = append(errs, fmt.Errorf("resource %s/%s/%s not ready. status: %s, message: %s", id.GroupKind.Kind, id.Namespace, id.Name, st, msg))
		delete(pending, id)
	}
	return errors.Join(append(errs, context.DeadlineExceeded)...)
}

// FailWait records in storage that the parked wait of rel, written by
// action a, failed with err, as Helm records a failed wait: an install's
// revision "Release %q failed: <err>"; an upgrade's "Upgrade %q failed:
// <err>", and the revision it replaced back in the status it had before
// (previous: deployed, or failed), which Helm only supersedes once the
// wait passed.
func (c *Client) FailWait(rel *releasev1.Release, a Action, err error, previous string) error {
	if a == ActionUpgrade {
		if err := c.restore(rel, previous); err != nil {
			return err
		}
		rel.Info.Status = rcommon.StatusFailed
		rel.Info.Description = fmt.Sprintf("Upgrade %q failed: %s", rel.Name, err)
	} else {
		rel.SetStatus(rcommon.StatusFailed, fmt.Sprintf("Release %q failed: %s", rel.Name, err.Error()))
	}
	if err := c.cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("marking release %s failed: %w", c.opts.Name, err)
	}
	return nil
}

// Hold puts rel, which action a just wrote deployed without a wait, back
// in the state Helm's storage is in while its waiter waits: rel
// pending-install ("Initial install underway") or pending-upgrade
// ("Preparing upgrade"), the revision it replaced in the status it had
// (previous). `helm upgrade` run by a person meanwhile is refused as
// during Helm's own wait, and a restarted controller finds the wait
// (Unverified).
func (c *Client) Hold(rel *releasev1.Release, a Action, previous string) error {
	st, desc := rcommon.StatusPendingInstall, "Initial install underway"
	if a == ActionUpgrade {
		if err := c.restore(rel, previous); err != nil {
			return err
		}
		st, desc = rcommon.StatusPendingUpgrade, "Preparing upgrade"
	}
	rel.SetStatus(st, desc)
	if err := c.cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("holding release %s while its objects roll out: %w", c.opts.Name, err)
	}
	return nil
}

// Settle ends the held wait of rel that passed, as Helm ends its wait:
// the revision an upgrade replaced superseded, rel deployed ("Install
// complete", "Upgrade complete").
func (c *Client) Settle(rel *releasev1.Release, a Action) error {
	desc := "Install complete"
	if a == ActionUpgrade {
		desc = "Upgrade complete"
		if prev := c.Previous(rel); prev != nil && prev.Info != nil && prev.Info.Status != rcommon.StatusSuperseded {
			prev.Info.Status = rcommon.StatusSuperseded
			if err := c.cfg.Releases.Update(prev); err != nil {
				return fmt.Errorf("superseding release %s.v%d: %w", c.opts.Name, prev.Version, err)
			}
		}
	}
	rel.SetStatus(rcommon.StatusDeployed, desc)
	if err := c.cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("marking release %s deployed: %w", c.opts.Name, err)
	}
	return nil
}

// restore puts the revision before rel back to previous when the upgrade
// superseded it.
func (c *Client) restore(rel *releasev1.Release, previous string) error {
	if previous != string(rcommon.StatusDeployed) && previous != string(rcommon.StatusFailed) {
		return nil
	}
	prev := c.Previous(rel)
	if prev == nil || prev.Info == nil || prev.Info.Status != rcommon.StatusSuperseded {
		return nil
	}
	prev.Info.Status = rcommon.Status(previous)
	if err := c.cfg.Releases.Update(prev); err != nil {
		return fmt.Errorf("restoring release %s.v%d: %w", c.opts.Name, prev.Version, err)
	}
	return nil
}

// Previous returns the revision before rel in storage; nil when there is
// none.
func (c *Client) Previous(rel *releasev1.Release) *releasev1.Release {
	if rel == nil || rel.Version <= 1 {
		return nil
	}
	rls, err := c.cfg.Releases.Get(rel.Name, rel.Version-1)
	if err != nil {
		return nil
	}
	prev, _ := toV1(rls)
	return prev
}

// Unverified reports whether latest is a revision an install or upgrade
// of hr wrote without Helm's waiter and whose wait has not ended, and
// which action wrote it: the HelmRelease still shows that action in
// progress (Ready Unknown, "Running '<action>' action…", written before
// the action ran), latest is held (Hold) or deployed (Helm's write
// before the hold) and is the desired release, and status.history has
// not recorded it (a wait that ends records it). A restarted controller
// resumes such a wait instead of acting again.
func Unverified(hr *helmv2.HelmRelease, latest *Info, d Desired) (Action, bool) {
	if latest == nil || latest.ChartName != d.ChartName ||
		latest.ChartVersion != d.ChartVersion || latest.ConfigDigest != d.ConfigDigest {
		return "", false
	}
	var a Action
	switch {
	case hr.Status.LastAttemptedReleaseAction == helmv2.ReleaseActionInstall &&
		(latest.Status == rcommon.StatusDeployed || latest.Status == rcommon.StatusPendingInstall):
		a = ActionInstall
	case hr.Status.LastAttemptedReleaseAction == helmv2.ReleaseActionUpgrade &&
		(latest.Status == rcommon.StatusDeployed || latest.Status == rcommon.StatusPendingUpgrade):
		a = ActionUpgrade
	default:
		return "", false
	}
	for _, s := range hr.Status.History {
		if s != nil && s.Name == latest.Name && s.Version == latest.Version {
			return "", false
		}
	}
	for _, c := range hr.Status.Conditions {
		if c.Type == meta.ReadyCondition {
			return a, c.Status == "Unknown" && c.Reason == meta.ProgressingReason &&
				strings.HasPrefix(c.Message, fmt.Sprintf("Running '%s' action", a))
		}
	}
	return "", false
}
