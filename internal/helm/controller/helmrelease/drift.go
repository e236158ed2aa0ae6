package helmrelease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// Flux's event reasons for drift correction, and its Ready reason when
// the cluster state cannot be determined.
const (
	driftCorrectedReason        = "DriftCorrected"
	driftCorrectionFailedReason = "DriftCorrectionFailed"
	actionPlanErrorReason       = "ActionPlanError"
)

// maxReportBytes bounds each part of a drift report (the list of objects,
// the diffs) in events and the Drifted condition; what is cut is counted.
const maxReportBytes = 4096

// drifted is one object of the release that differs from its manifest.
type drifted struct {
	desired *unstructured.Unstructured
	diff    *ssa.ObjectDiff
}

// inSync runs when the release needs no Helm action. It records the
// objects of the release manifest in status.inventory and, unless
// spec.driftDetection is disabled, compares each with the cluster by a
// server-side apply dry-run: warn reports the drift, enabled also corrects
// it. Either way Ready stays True, as in Flux; the Drifted condition and
// the events carry the report.
func (x *run) inSync(ctx context.Context, latest *release.Info) error {
	objs, err := release.ManifestObjects(x.helm.Last(), x.r.Client.IsObjectNamespaced)
	if err != nil {
		return &errs.Generic{Err: err, Reason: helmv2.ReconciliationFailedReason}
	}
	x.obj.Status.Inventory = inventoryOf(objs)
	mode := x.obj.GetDriftDetection().GetMode()
	if mode == helmv2.DriftDetectionDisabled || latest == nil {
		conditions.Delete(x.obj, helmv2.DriftedCondition)
		return nil
	}
	c, err := x.r.clusterClient(x.obj)
	if err != nil {
		return &errs.Generic{Err: err, Reason: helmv2.InitFailedReason}
	}
	drifts, err := x.detectDrift(ctx, ssa.NewManager(c, ssa.Options{}), objs)
	if err != nil {
		if len(drifts) == 0 {
			return &errs.Generic{Err: fmt.Errorf("Could not determine Helm action: unable to determine cluster state: %w", err), Reason: actionPlanErrorReason} //nolint:staticcheck // ST1005: Flux's message
		}
		ctrl.LoggerFrom(ctx).Error(err, "diff of release against cluster state completed with error")
	}
	if len(drifts) == 0 {
		conditions.MarkFalse(x.obj, helmv2.DriftedCondition, helmv2.NoDriftDetectedReason,
			"Cluster state of release %s matches the desired state", latest.FullName())
		return nil
	}
	x.reportDrift(ctx, c, latest, drifts, mode)
	return nil
}

// clusterClient reads and writes the release's objects in the cluster, as
// the identity Helm acts with (restConfig, the seam for impersonation and
// spec.kubeConfig), with the manager's RESTMapper.
func (r *Reconciler) clusterClient(obj *helmv2.HelmRelease) (client.Client, error) {
	cfg, err := r.restConfig(context.Background(), obj)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: r.Client.Scheme(), Mapper: r.Client.RESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("building the client for drift detection: %w", err)
	}
	return c, nil
}

// detectDrift dry-runs every object of the manifest with helm-controller's
// field manager, leaving out objects labelled or annotated
// helm.toolkit.fluxcd.io/driftDetection: disabled (in the manifest or in
// the cluster) and the fields spec.driftDetection.ignore names. An object
// that cannot be compared does not stop the others: their drift is
// returned with the errors.
func (x *run) detectDrift(ctx context.Context, m *ssa.Manager, objs []*unstructured.Unstructured) ([]drifted, error) {
	rules := x.obj.GetDriftDetection().Ignore
	var out []drifted
	var failures []error
	for _, o := range objs {
		if driftDisabled(o) {
			continue
		}
		paths, err := ssa.IgnorePaths(rules, o)
		if err != nil {
			return nil, fmt.Errorf("spec.driftDetection.ignore: %w", err)
		}
		d, err := m.Diff(ctx, o, ssa.DiffOptions{
			FieldManager: meta.HelmControllerManager, IgnorePaths: paths, DesiredName: "release", AbsentWithoutDryRun: true,
		})
		if err != nil {
			failures = append(failures, fmt.Errorf("%s: %w", resourceName(o), err))
			continue
		}
		if d.Action != ssa.DiffUnchanged && !driftDisabled(d.Live) {
			out = append(out, drifted{desired: o, diff: d})
		}
	}
	return out, errors.Join(failures...)
}

// driftDisabled reports whether obj opts out of drift detection; values
// compare without regard to case.
func driftDisabled(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	return strings.EqualFold(obj.GetAnnotations()[helmv2.DriftDetectionMetadataKey], helmv2.DisabledValue) ||
		strings.EqualFold(obj.GetLabels()[helmv2.DriftDetectionMetadataKey], helmv2.DisabledValue)
}

// reportDrift emits Flux's DriftDetected event, corrects the drift in
// enabled mode (DriftCorrected or DriftCorrectionFailed), and sets the
// Drifted condition. Beyond Flux, which logs the changes at debug level
// only, the event and the condition carry the diffs, Secret values masked.
func (x *run) reportDrift(ctx context.Context, c client.Client, latest *release.Info, drifts []drifted, mode helmv2.DriftDetectionMode) {
	diffs := diffReport(drifts)
	msg := fmt.Sprintf("Cluster state of release %s has drifted from the desired state:\n%s", latest.FullName(), summarizeDrift(drifts))
	x.r.Events.Warning(ctx, x.obj, helmv2.DriftDetectedReason, x.eventMeta(latest), "%s", withDiffs(msg, diffs))
	if mode != helmv2.DriftDetectionEnabled {
		conditions.MarkTrue(x.obj, helmv2.DriftedCondition, helmv2.DriftDetectedReason, "%s", withDiffs(msg, diffs))
		return
	}
	cs, err := correctDrift(ctx, c, drifts)
	if err != nil {
		verb := "correct"
		if len(cs.Entries) > 0 {
			verb = "partially correct"
		}
		fail := fmt.Sprintf("Failed to %s cluster state of release %s:\n%s", verb, latest.FullName(), bounded(err.Error(), maxReportBytes))
		if len(cs.Entries) > 0 {
			fail += "\n\nSuccessful corrections:\n" + cs.String()
		}
		x.r.Events.Warning(ctx, x.obj, driftCorrectionFailedReason, x.eventMeta(latest), "%s", fail)
		conditions.MarkTrue(x.obj, helmv2.DriftedCondition, helmv2.DriftDetectedReason, "%s", withDiffs(fail, diffs))
		return
	}
	done := fmt.Sprintf("Cluster state of release %s has been corrected:\n%s", latest.FullName(), cs.String())
	x.r.Events.Normal(ctx, x.obj, driftCorrectedReason, x.eventMeta(latest), "%s", done)
	conditions.MarkFalse(x.obj, helmv2.DriftedCondition, driftCorrectedReason, "%s", withDiffs(done, diffs))
}

// correctDrift recreates the deleted objects, then patches the changed
// ones with the JSON patch from the cluster's object to the dry-run
// result, as Flux does: the patch leaves the ignored fields alone, where
// applying the manifest again would reset them. Creations go first, each
// group in apply order; a failure does not stop the others.
func correctDrift(ctx context.Context, c client.Client, drifts []drifted) (*ssa.ChangeSet, error) {
	ids := make([]ssa.ObjMetadata, len(drifts))
	for i, d := range drifts {
		ids[i] = d.diff.ObjMetadata
	}
	ssa.SortInApplyOrder(ids)
	rank := make(map[ssa.ObjMetadata]int, len(ids))
	for i, id := range ids {
		rank[id] = i
	}
	drifts = slices.Clone(drifts)
	slices.SortStableFunc(drifts, func(a, b drifted) int {
		ca, cb := a.diff.Action == ssa.DiffCreated, b.diff.Action == ssa.DiffCreated
		if ca != cb && ca {
			return -1
		}
		if ca != cb {
			return 1
		}
		return rank[a.diff.ObjMetadata] - rank[b.diff.ObjMetadata]
	})
	cs := &ssa.ChangeSet{}
	var failures []error
	for _, d := range drifts {
		action, err := correctOne(ctx, c, d)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		cs.Entries = append(cs.Entries, ssa.ChangeSetEntry{ObjMetadata: d.diff.ObjMetadata, Version: d.desired.GroupVersionKind().Version, Action: action})
	}
	return cs, errors.Join(failures...)
}

func correctOne(ctx context.Context, c client.Client, d drifted) (ssa.Action, error) {
	owner := client.FieldOwner(meta.HelmControllerManager)
	if d.diff.Action == ssa.DiffCreated {
		if err := c.Create(ctx, d.desired.DeepCopy(), owner); err != nil {
			return "", fmt.Errorf("%s creation failure: %w", resourceName(d.desired), err)
		}
		return ssa.Created, nil
	}
	data, err := json.Marshal(d.diff.Patch)
	if err != nil {
		return "", fmt.Errorf("%s patch failure: %w", resourceName(d.desired), err)
	}
	if err := c.Patch(ctx, d.diff.Live.DeepCopy(), client.RawPatch(types.JSONPatchType, data), owner); err != nil {
		if d.desired.GetKind() == "Secret" {
			// The server's message may quote the values.
			err = fmt.Errorf("%s", apierrors.ReasonForError(err))
		}
		return "", fmt.Errorf("%s patch failure: %w", resourceName(d.desired), err)
	}
	return ssa.Configured, nil
}

// resourceName is how Flux names an object in drift reports:
// Kind/namespace/name, the namespace empty for cluster-scoped objects.
func resourceName(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}

// summarizeDrift is Flux's list: one line per object, "removed" for a
// deleted one, "changed (a additions, c changes, r removals)" otherwise.
func summarizeDrift(drifts []drifted) string {
	lines := make([]string, 0, len(drifts))
	for _, d := range drifts {
		if d.diff.Action == ssa.DiffCreated {
			lines = append(lines, resourceName(d.desired)+" removed")
			continue
		}
		a, c, r := d.diff.Counts()
		lines = append(lines, fmt.Sprintf("%s changed (%d additions, %d changes, %d removals)", resourceName(d.desired), a, c, r))
	}
	return bounded(strings.Join(lines, "\n"), maxReportBytes)
}

// diffReport joins the unified diffs of the changed objects, bounded.
func diffReport(drifts []drifted) string {
	var parts []string
	for _, d := range drifts {
		if d.diff.Diff != "" {
			parts = append(parts, d.diff.Diff)
		}
	}
	return bounded(strings.Join(parts, "\n"), maxReportBytes)
}

func withDiffs(msg, diffs string) string {
	if diffs == "" {
		return msg
	}
	return msg + "\n\n" + diffs
}

// bounded cuts text at a line boundary to at most limit bytes, and says
// how many lines it left out.
func bounded(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		if b.Len()+len(l)+1 > limit {
			fmt.Fprintf(&b, "… %d more lines not shown", len(lines)-i)
			return b.String()
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
