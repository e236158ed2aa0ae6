package kustomization

import (
	"context"
	"errors"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/healthwatch"
	"github.com/weir-gitops/weir/internal/apply/parked"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// healthWaits are the parked health checks (internal/apply/parked): a run
// parks its wait after the first look and gives its worker back; a later
// run for the same generation, revision and request finds it and judges
// it again.
type healthWaits interface {
	Park(parked.Spec[carried]) *parked.Wait[carried]
	Find(owner types.NamespacedName, f parked.For) *parked.Wait[carried]
	Judge(ctx context.Context, mgr *ssa.Manager, kube client.Reader, w *parked.Wait[carried]) parked.Verdict
	Drop(owner types.NamespacedName)
}

// carried is what a parked health check keeps from its apply to its end:
// the build's checksum (status.history) and whether the apply changed
// anything (the "Health check passed" event).
type carried struct {
	checksum string
	changed  bool
}

// parkedWaits returns the parked health checks, made on first use from
// Health and Options, which are set before the manager starts.
func (r *Reconciler) parkedWaits() healthWaits {
	r.waitsOnce.Do(func() {
		r.waits = &parked.Waits[carried]{Watcher: r.Health, PollInterval: r.Options.HealthPollInterval,
			FailFast: !r.Options.DisableFailFast, Now: r.now}
	})
	return r.waits
}

func keyOf(obj *kustomizev1.Kustomization) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
}

func requestToken(obj *kustomizev1.Kustomization) string {
	token, _ := meta.ReconcileAnnotationValue(obj.GetAnnotations())
	return token
}

// parkedFor is what a wait of obj at revision holds for.
func parkedFor(obj *kustomizev1.Kustomization, revision string) parked.For {
	return parked.For{Generation: obj.Generation, Revision: revision, Token: requestToken(obj)}
}

// resumable returns obj's parked wait if it still holds for obj at
// revision.
func (r *Reconciler) resumable(obj *kustomizev1.Kustomization, revision string) *parked.Wait[carried] {
	return r.parkedWaits().Find(keyOf(obj), parkedFor(obj, revision))
}

// resumeHealth looks again at the objects of a parked wait: the health
// phase of a run that ends an apply of an earlier one.
func (r *Reconciler) resumeHealth(ctx context.Context, obj *kustomizev1.Kustomization, w *parked.Wait[carried]) (healthResult, error) {
	res := healthResult{resumed: true, since: w.Start(), applyChanged: w.Carry().changed}
	kube, err := r.Clients.For(ctx, obj)
	if err != nil {
		r.parkedWaits().Drop(keyOf(obj))
		return res, r.retry(obj, meta.ReconciliationFailedReason, err)
	}
	return r.judgeHealth(ctx, obj, r.newManager(kube), kube, w, res)
}

// judgeHealth checks a wait's objects once and says what that means for
// the run: passed (res with the time it took), failed (fail-fast or
// timeout, as Flux words them), or still in progress (the run parks).
func (r *Reconciler) judgeHealth(ctx context.Context, obj *kustomizev1.Kustomization, mgr *ssa.Manager,
	kube client.Reader, w *parked.Wait[carried], res healthResult) (healthResult, error) {
	v := r.parkedWaits().Judge(ctx, mgr, kube, w)
	switch {
	case v.Passed:
		res.passed, res.took = true, v.Took
		return res, nil
	case v.Err != nil:
		return res, r.retry(obj, meta.HealthCheckFailedReason, v.Err)
	}
	return res, &errs.InProgress{Err: errors.New("health checks in progress"), RequeueAfter: v.After}
}

// watchable reports whether the controller's own watches may follow what
// obj applied: not when it applies as another account (the controller
// would read what that account may not) or to another cluster.
func watchable(obj *kustomizev1.Kustomization) bool {
	return obj.Spec.ServiceAccountName == "" && obj.Spec.KubeConfig == nil
}

// live is the watch cache Apply checks its memo against, nil when obj's
// objects are not the controller's to watch.
func (r *Reconciler) live(obj *kustomizev1.Kustomization) ssa.LiveReader {
	if r.Health == nil || !watchable(obj) {
		return nil
	}
	return r.Health
}

func (r *Reconciler) newManager(kube client.Client) *ssa.Manager {
	return ssa.NewManager(kube, ssa.Options{Concurrency: r.Options.ConcurrentSSA, PollInterval: r.Options.HealthPollInterval})
}

// NewHealthWatcher returns the Watcher a Reconciler's Health field takes:
// Kustomizations are its owners; c is a healthwatch.NewCache.
func NewHealthWatcher(c cache.Cache, mapper apimeta.RESTMapper) *healthwatch.Watcher {
	return healthwatch.New(c, mapper, func() client.Object { return &kustomizev1.Kustomization{} })
}
