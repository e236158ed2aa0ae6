package kustomization

import (
	"context"
	"errors"
	"time"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/dependency"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// recordEvents tells people what happened, with Flux's messages: the change
// set of the apply and of the prune ("Deployment/apps/podinfo configured"),
// a passed health check when it had not passed before, the end of a
// successful reconcile, or the failure.
func (r *Reconciler) recordEvents(ctx context.Context, obj *kustomizev1.Kustomization, out *outcome, err error, took time.Duration) {
	if r.Events == nil || out == nil {
		return
	}
	md := map[string]string{}
	if out.source.revision != "" {
		md["revision"] = out.source.revision
	}
	if out.source.originRevision != "" {
		md["originRevision"] = out.source.originRevision
	}
	if out.apply.applied != nil {
		if changes := out.apply.applied.Changes(); changes != "" {
			r.Events.Normal(ctx, obj, meta.ProgressingReason, md, "%s", changes)
		}
	}
	if out.apply.pruned != nil {
		if changes := out.apply.pruned.Changes(); changes != "" {
			r.Events.Normal(ctx, obj, meta.ProgressingReason, md, "%s", changes)
		}
	}
	if _, ok := errs.AsInProgress(err); ok {
		return
	}
	if err != nil {
		reason := errs.Reason(err, meta.ReconciliationFailedReason)
		if w, ok := errs.AsWaiting(err); ok && !errors.Is(err, dependency.ErrCycle) {
			if reason == meta.DependencyNotReadyReason {
				r.Events.Normal(ctx, obj, reason, md, "Dependencies do not meet ready condition, retrying in %s", w.RequeueAfter)
			}
			return
		}
		r.Events.Warning(ctx, obj, reason, md, "%s", err)
		return
	}
	if out.health.passed && (!out.begin.healthy || out.changed()) {
		r.Events.Normal(ctx, obj, meta.ProgressingReason, md, "Health check passed in %s", out.health.took)
	}
	r.Events.Normal(ctx, obj, conditions.Get(obj, meta.ReadyCondition).Reason, finishedMetadata(md),
		"Reconciliation finished in %s, next run in %s", took.Round(time.Millisecond), obj.Spec.Interval.Duration)
}

// recordQuietEnd ends a run that changed nothing (quiet.go): Flux's
// "Reconciliation finished" goes to the notification controller as after
// any successful run, but no Kubernetes Event is written.
func (r *Reconciler) recordQuietEnd(ctx context.Context, obj *kustomizev1.Kustomization, out *outcome, took time.Duration) {
	if r.Events == nil {
		return
	}
	md := map[string]string{"revision": out.source.revision}
	if out.source.originRevision != "" {
		md["originRevision"] = out.source.originRevision
	}
	r.Events.Forward(ctx, obj, conditions.Get(obj, meta.ReadyCondition).Reason, finishedMetadata(md),
		"Reconciliation finished in %s, next run in %s", took.Round(time.Millisecond), obj.Spec.Interval.Duration)
}

// finishedMetadata is md with the commit status Flux's providers update
// on "Reconciliation finished".
func finishedMetadata(md map[string]string) map[string]string {
	done := map[string]string{"commit_status": "update"}
	for k, v := range md {
		done[k] = v
	}
	return done
}
