package kustomization

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// quietProgressAfter is how long a steady reconcile holds its progress
// phases back: one that takes longer shows the phase it is in from the
// next phase on, as any other reconcile does
// (docs/design/0019-quiet-reconciles.md).
const quietProgressAfter = 5 * time.Second

// steady reports whether obj's last reconcile left it converged at the
// revision this one found: Ready for its generation, not in progress nor
// stalled, the same revision applied, and no reconcile request pending.
// A steady reconcile is quiet: it writes its progress only when it
// becomes slow or changes something, and nothing at all when it finds
// nothing to change.
func steady(obj *kustomizev1.Kustomization, src sourceResult) bool {
	ready := conditions.Get(obj, meta.ReadyCondition)
	return ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == obj.Generation &&
		obj.Status.ObservedGeneration == obj.Generation &&
		conditions.Get(obj, meta.ReconcilingCondition) == nil && conditions.Get(obj, meta.StalledCondition) == nil &&
		obj.Status.LastAppliedRevision == src.revision && obj.Status.LastAttemptedRevision == src.revision &&
		obj.Status.LastAppliedOriginRevision == src.originRevision &&
		requestToken(obj) == obj.Status.LastHandledReconcileAt
}

// progress reports the phase that begins, in kustomize-controller's words,
// on Reconciling=True and Ready=Unknown (reason Progressing), and patches
// the status once the phase has run for its hold (progressMessage).
// kustomize-controller leaves "Reconciliation in progress" on Ready; weir
// puts the phase there too, so that `get` shows which phase runs (see
// docs/design/0005-finalizer-inventory-progress.md).
func (r *Reconciler) progress(ctx context.Context, obj *kustomizev1.Kustomization, p *progress, revision, phase string) error {
	return r.progressMessage(ctx, obj, p, progressText(obj, revision, phase))
}

// progressText is kustomize-controller's message for phase at revision.
func progressText(obj *kustomizev1.Kustomization, revision, phase string) string {
	return fmt.Sprintf("%s for revision %s with a timeout of %s", phase, revision, timeoutOf(obj))
}

// progressMessage begins a phase that reports msg. The phase is held back
// (hold.go): written when it has lasted progressHold, or with the next
// write the run makes (patch), never when the next phase or the run's end
// comes sooner (docs/design/0043-coalesced-progress-writes.md). A quiet
// run that wrote nothing yet holds its phases back for its first
// quietProgressAfter.
func (r *Reconciler) progressMessage(ctx context.Context, obj *kustomizev1.Kustomization, p *progress, msg string) error {
	if err := r.release(obj, p); err != nil {
		return err
	}
	conditions.MarkReconciling(obj, meta.ProgressingReason, "%s", msg)
	now := r.now()
	until := now.Add(r.progressHold(obj))
	if quiet := p.begun.Add(quietProgressAfter); p.quiet && !p.wrote && quiet.After(until) {
		until = quiet
	}
	p.held = holdProgress(ctx, obj, until.Sub(now))
	return nil
}

// patch sends the status as the phases left it so far, a phase held back
// included: the inventory written ahead of an apply stage's writes is
// never held, and it carries the phase, so that no version of the status
// pairs the last run's end with this run's inventory. From then on the
// run is visible and ends with a status of its own.
func (r *Reconciler) patch(ctx context.Context, obj *kustomizev1.Kustomization, p *progress) error {
	if err := r.release(obj, p); err != nil {
		return err
	}
	p.wrote = true
	return reconcile.Patch(ctx, obj)
}

// quietEnd settles the status of a quiet run that wrote nothing so far
// and succeeded, from before (the status it started from): the progress it
// held back never happened, so the conditions are back as they were
// (Ready keeps its transition time); and a run that changed nothing
// leaves the whole status as it found it, so that nothing is written. It
// reports whether the run changed nothing.
func quietEnd(obj *kustomizev1.Kustomization, before *kustomizev1.KustomizationStatus, out *outcome, err error) bool {
	if out == nil || !out.progress.quiet || out.progress.wrote || err != nil {
		return false
	}
	if out.noop(before) {
		obj.Status = *before.DeepCopy()
		return true
	}
	obj.Status.Conditions = before.DeepCopy().Conditions
	return false
}

// noop reports whether the run found nothing to do against the status it
// started from: the apply and the prune changed nothing, the inventory is
// the same, and the health check (when there is one) passed at once, as
// it had before.
func (o *outcome) noop(before *kustomizev1.KustomizationStatus) bool {
	if o.changed() || o.apply.pruned != nil && o.apply.pruned.Changes() != "" || o.apply.inventory == nil {
		return false
	}
	if !equality.Semantic.DeepEqual(o.apply.inventory, before.Inventory) {
		return false
	}
	healthy := conditions.Get(&kustomizev1.Kustomization{Status: *before}, meta.HealthyCondition)
	if o.health.passed {
		return healthy != nil && healthy.Status == metav1.ConditionTrue
	}
	return healthy == nil
}
