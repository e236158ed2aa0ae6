package helmrepository

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

// Reconciler reconciles HelmRepository objects.
type Reconciler struct {
	source.Deps

	// validators remembers, per object, the HTTP validators of the index
	// its artifact was stored from.
	validators sync.Map // types.UID → remembered
}

// remembered ties validators to the URL and revision they were seen with.
type remembered struct {
	url  string
	prev helmrepo.Previous
}

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases for type default. An OCI HelmRepository is a static object
// and skips the skeleton: it gets no finalizer, which the skeleton would
// add.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var peek sourcev1.HelmRepository
	if err := r.Client.Get(ctx, req.NamespacedName, &peek); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if peek.IsOCI() {
		return ctrl.Result{}, r.reconcileStatic(ctx, &peek)
	}
	return reconcile.Run(ctx, r.Driver(), req, &sourcev1.HelmRepository{}, r.kind())
}

// kind is the HelmRepository of the index kind as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*sourcev1.HelmRepository, *outcome] {
	return reconcile.Kind[*sourcev1.HelmRepository, *outcome]{
		Name:       sourcev1.HelmRepositoryKind,
		Conditions: conditionTypes,
		Suspended:  func(obj *sourcev1.HelmRepository) bool { return obj.Spec.Suspend },
		Finalize:   r.finalize,
		Begin:      r.begin,
		Timeout:    func(obj *sourcev1.HelmRepository) time.Duration { return obj.GetTimeout() },
		Phases:     []reconcile.Phase[*sourcev1.HelmRepository, *outcome]{r.fetch},
		Status:     applyStatus,
		Events:     r.recordEvents,
	}
}

// outcome is what the phases observed; applyStatus turns it into status.
type outcome struct {
	// revision is the digest of the index upstream serves now, when it
	// could be fetched.
	revision string
	// artifact is the stored artifact after this run (new or kept); nil
	// when there is none, or the recorded one left the storage.
	artifact *meta.Artifact
	// previousDigest is the digest of the artifact before this run.
	previousDigest string
	// newArtifact is true when this run stored a file.
	newArtifact bool
	// url is the repository URL the index came from, for the event.
	url string
	// wasFailing is whether the run before this one failed.
	wasFailing bool
}

// begin starts the record from the stored artifact, when it is still in
// the storage, and remembers whether the last run failed, so that
// recovering from it is announced.
func (r *Reconciler) begin(_ context.Context, obj *sourcev1.HelmRepository) *outcome {
	out := &outcome{artifact: obj.Status.Artifact, url: obj.Spec.URL, wasFailing: failing(obj)}
	if a := out.artifact; a != nil {
		out.previousDigest = a.Digest
		if !r.Storage.Exists(*a) {
			out.artifact = nil
		}
	}
	return out
}

// fetch downloads the index unless upstream says it is unchanged, and
// stores it when it changed.
func (r *Reconciler) fetch(ctx context.Context, obj *sourcev1.HelmRepository, out *outcome) error {
	c, err := helmrepo.NewClient(ctx, r.APIReader, obj, r.Helm.Limits, r.Auth)
	if err != nil {
		return clientError(err)
	}
	ix, changed, err := c.FetchIndex(ctx, r.previous(obj, out.artifact))
	if err != nil {
		return fetchError(err)
	}
	out.revision = ix.Digest
	if !changed && out.artifact != nil {
		r.remember(obj, ix)
		r.Helm.Cache.Touch(out.artifact.Path)
		return nil
	}
	return r.store(ctx, obj, ix, out)
}

// previous is what FetchIndex may skip: the validators of the stored index
// when it came from the same URL, and its revision. Nothing when there is
// no artifact, so the index is fetched and stored.
func (r *Reconciler) previous(obj *sourcev1.HelmRepository, a *meta.Artifact) helmrepo.Previous {
	if a == nil {
		return helmrepo.Previous{}
	}
	prev := helmrepo.Previous{Digest: a.Revision}
	if v, ok := r.validators.Load(obj.UID); ok {
		if m := v.(remembered); m.url == obj.Spec.URL && m.prev.Digest == a.Revision {
			prev = m.prev
		}
	}
	return prev
}

func (r *Reconciler) remember(obj *sourcev1.HelmRepository, ix *helmrepo.Index) {
	r.validators.Store(obj.UID, remembered{url: obj.Spec.URL, prev: ix.Previous()})
}

// store writes the parsed index as index-<revision hex>.yaml, caches it
// for the HelmCharts and collects old artifacts.
func (r *Reconciler) store(ctx context.Context, obj *sourcev1.HelmRepository, ix *helmrepo.Index, out *outcome) error {
	data, err := helmrepo.MarshalJSON(ix.File)
	if err != nil {
		return &errs.Generic{Err: err, Reason: sourcev1.ArchiveOperationFailedReason}
	}
	unlock, err := r.Storage.Lock(ctx, sourcev1.HelmRepositoryKind, obj.Namespace, obj.Name)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to acquire lock for artifact: %w", err), Reason: sourcev1.AcquireLockFailedReason}
	}
	defer unlock()
	_, hex, _ := strings.Cut(ix.Digest, ":")
	a := r.Storage.NewArtifactFor(sourcev1.HelmRepositoryKind, obj, ix.Digest, "index-"+hex+".yaml")
	if err := r.Storage.Copy(ctx, &a, bytes.NewReader(data)); err != nil {
		return &errs.Generic{Err: fmt.Errorf("unable to save artifact to storage: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
	}
	out.artifact, out.newArtifact = &a, true
	r.remember(obj, ix)
	r.Helm.Cache.Set(a.Path, ix.File)
	if _, err := r.Storage.GarbageCollect(ctx, a, r.RetentionRecords, r.RetentionTTL); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "garbage collection of old artifacts failed")
	}
	return nil
}

// clientError words a failure to build the client as Flux does: a URL that
// cannot work stalls, a Secret problem is an AuthenticationFailed to retry.
func clientError(err error) error {
	switch {
	case errors.Is(err, helmrepo.ErrInvalidURL):
		return &errs.Stalling{Err: err, Reason: sourcev1.URLInvalidReason}
	case errors.Is(err, helmrepo.ErrUnsupported):
		return &errs.Stalling{Err: err, Reason: sourcev1.AuthenticationFailedReason}
	default:
		return &errs.Generic{Err: err, Reason: sourcev1.AuthenticationFailedReason}
	}
}

// fetchError words a failed fetch: an index that does not parse is an
// IndexationFailed, refused credentials an AuthenticationFailed, the rest
// Flux's "failed to fetch Helm repository index" with reason Failed. All
// are retried, as in Flux: the index may be fixed or shrink upstream.
func fetchError(err error) error {
	switch {
	case errors.Is(err, helmrepo.ErrInvalidIndex):
		return &errs.Generic{Err: err, Reason: sourcev1.IndexationFailedReason}
	case errors.Is(err, helmrepo.ErrInvalidURL):
		return &errs.Stalling{Err: fmt.Errorf("invalid Helm repository URL: %w", err), Reason: sourcev1.URLInvalidReason}
	}
	wrapped := fmt.Errorf("failed to fetch Helm repository index: %w", err)
	if errors.Is(err, helmrepo.ErrAuth) {
		return &errs.Generic{Err: wrapped, Reason: sourcev1.AuthenticationFailedReason}
	}
	return &errs.Generic{Err: wrapped, Reason: meta.FailedReason}
}

// finalize removes the object's artifacts and what is remembered of it,
// then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, obj *sourcev1.HelmRepository) error {
	if err := r.removeArtifacts(obj); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	ctrl.LoggerFrom(ctx).Info("artifacts removed, finalizer released")
	return nil
}

func (r *Reconciler) removeArtifacts(obj *sourcev1.HelmRepository) error {
	if _, err := r.Storage.RemoveAll(sourcev1.HelmRepositoryKind, obj.Namespace, obj.Name); err != nil {
		return fmt.Errorf("garbage collecting artifacts of deleted object: %w", err)
	}
	if a := obj.Status.Artifact; a != nil {
		r.Helm.Cache.Remove(a.Path)
	}
	r.forget(obj.UID)
	obj.Status.Artifact = nil
	obj.Status.URL = ""
	return nil
}

func (r *Reconciler) forget(uid types.UID) { r.validators.Delete(uid) }
