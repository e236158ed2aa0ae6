package ocirepository

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// Reconciler reconciles OCIRepository objects.
type Reconciler struct {
	source.Deps
	OCI oci.Client
	// MaxLayerSize bounds an extracted layer's content, or a copied
	// layer's blob; 0 means artifact.DefaultMaxUntarSize, negative means
	// unbounded.
	MaxLayerSize int64
}

func defaultOCIClient() oci.Client { return oci.NewClient() }

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.Run(ctx, r.Driver(), req, &sourcev1.OCIRepository{}, r.kind())
}

// kind is the OCIRepository as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*sourcev1.OCIRepository, *outcome] {
	return reconcile.Kind[*sourcev1.OCIRepository, *outcome]{
		Name:       sourcev1.OCIRepositoryKind,
		Conditions: conditionTypes,
		Suspended:  func(obj *sourcev1.OCIRepository) bool { return obj.Spec.Suspend },
		Finalize:   r.finalize,
		Begin: func(_ context.Context, obj *sourcev1.OCIRepository) *outcome {
			out := &outcome{artifact: obj.Status.Artifact}
			if a := obj.Status.Artifact; a != nil {
				out.previousDigest = a.Digest
			}
			return out
		},
		Timeout: func(obj *sourcev1.OCIRepository) time.Duration { return obj.GetTimeout() },
		Phases:  []reconcile.Phase[*sourcev1.OCIRepository, *outcome]{r.begin, r.resolve, r.pull},
		Status:  applyStatus,
		Events:  r.recordEvents,
	}
}

// outcome is what the phases observed and share; applyStatus turns it into
// status.
type outcome struct {
	// remote and resolved are the registry and the artifact resolve found.
	remote   oci.Remote
	resolved *oci.Resolved
	// revision upstream points at now, when it could be resolved.
	revision string
	// ref is the resolved reference (host/repo:tag or @digest), for
	// messages.
	ref string
	// artifact is the stored artifact after this run (new or kept).
	artifact *meta.Artifact
	// previousDigest is the digest of the artifact before this run.
	previousDigest string
	// verifiedBy names the key that verified revision's signature in this
	// run; empty when nothing was verified now.
	verifiedBy string
	// newArtifact is true when this run stored a file.
	newArtifact bool
}

// begin shows a new generation or a reconcile request as in progress.
func (r *Reconciler) begin(ctx context.Context, obj *sourcev1.OCIRepository, _ *outcome) error {
	return source.Begin(ctx, obj, obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
}

// resolve finds and verifies the artifact the reference points at; when
// the stored artifact already holds it, the run ends here.
func (r *Reconciler) resolve(ctx context.Context, obj *sourcev1.OCIRepository, out *outcome) error {
	opts, err := r.remoteOptions(ctx, obj)
	if err != nil {
		return err
	}
	remote, err := r.OCI.Remote(ctx, obj.Spec.URL, opts)
	if err != nil {
		return &errs.Stalling{Err: fmt.Errorf("URL validation failed for '%s': %w", obj.Spec.URL, err), Reason: sourcev1.URLInvalidReason}
	}
	res, err := remote.Resolve(reference(obj))
	if err != nil {
		return resolveError(obj.Spec.URL, err)
	}
	out.remote, out.resolved = remote, res
	out.revision, out.ref = res.Revision, res.Ref
	if out.verifiedBy, err = r.verify(ctx, obj, remote, res); err != nil {
		return err
	}
	if r.upToDate(obj, out) {
		return reconcile.Stop
	}
	return source.Building(ctx, obj, out.revision)
}

// pull pulls the resolved artifact and stores it.
func (r *Reconciler) pull(ctx context.Context, obj *sourcev1.OCIRepository, out *outcome) error {
	return r.pullAndStore(ctx, obj, out.remote, out.resolved, out)
}

// upToDate reports whether the stored artifact already holds what the spec
// and upstream ask for, so the pull can be skipped.
func (r *Reconciler) upToDate(obj *sourcev1.OCIRepository, out *outcome) bool {
	a := obj.Status.Artifact
	return a != nil && a.Revision == out.revision && r.Storage.Exists(*a) && observedSpecUnchanged(obj)
}

// pullAndStore pulls the selected layer and stores it as the artifact
// <digest hex>.tar.gz: a tarball of the extracted content minus ignored
// files, or the layer blob itself.
func (r *Reconciler) pullAndStore(ctx context.Context, obj *sourcev1.OCIRepository, remote oci.Remote, res *oci.Resolved, out *outcome) error {
	op := obj.GetLayerOperation()
	if op != sourcev1.OCILayerExtract && op != sourcev1.OCILayerCopy {
		return &errs.Stalling{Err: fmt.Errorf("unsupported layer operation: %s", op), Reason: sourcev1.OCILayerOperationFailedReason}
	}
	dir, err := tempDir(obj)
	if err != nil {
		return &errs.Generic{Err: err, Reason: sourcev1.DirCreationFailedReason}
	}
	defer removeAll(dir)

	copyLayer := op == sourcev1.OCILayerCopy
	dst := dir
	if copyLayer {
		dst = filepath.Join(dir, "layer.tar.gz")
	}
	pulled, err := remote.Pull(res, dst, oci.PullOptions{
		MediaType: obj.GetLayerMediaType(),
		Copy:      copyLayer,
		MaxSize:   cmp.Or(r.MaxLayerSize, artifact.DefaultMaxUntarSize),
	})
	if err != nil {
		return pullError(obj.Spec.URL, err)
	}

	unlock, err := r.Storage.Lock(ctx, sourcev1.OCIRepositoryKind, obj.Namespace, obj.Name)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to acquire lock for artifact: %w", err), Reason: sourcev1.AcquireLockFailedReason}
	}
	defer unlock()
	a := r.Storage.NewArtifactFor(sourcev1.OCIRepositoryKind, obj, res.Revision, res.Hex()+".tar.gz")
	if copyLayer {
		if err := r.Storage.CopyFromPath(ctx, &a, dst); err != nil {
			return &errs.Generic{Err: fmt.Errorf("unable to copy artifact to storage: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
		}
	} else {
		filter, err := artifact.NewFilter(dir, obj.Spec.Ignore)
		if err != nil {
			return &errs.Generic{Err: fmt.Errorf("failed to load source ignore patterns from artifact: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
		}
		if _, err := r.Storage.Archive(ctx, &a, dir, filter); err != nil {
			return &errs.Generic{Err: fmt.Errorf("unable to archive artifact to storage: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
		}
	}
	a.Metadata = pulled.Annotations
	out.artifact, out.newArtifact = &a, true
	if _, err := r.Storage.GarbageCollect(ctx, a, r.RetentionRecords, r.RetentionTTL); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "garbage collection of old artifacts failed")
	}
	return nil
}

// resolveError words a Resolve failure as Flux does: choosing a semver tag
// is a ReadOperationFailed, finding the digest an OCIArtifactPullFailed;
// refused credentials are AuthenticationFailed either way, and a reference
// that cannot work as written stalls.
func resolveError(url string, err error) error {
	prefix, reason := "failed to determine artifact digest", sourcev1.OCIPullFailedReason
	var tagErr *oci.TagError
	if errors.As(err, &tagErr) {
		prefix, reason = fmt.Sprintf("failed to determine the artifact tag for '%s'", url), sourcev1.ReadOperationFailedReason
	}
	if errors.Is(err, oci.ErrAuth) {
		reason = sourcev1.AuthenticationFailedReason
	}
	wrapped := fmt.Errorf("%s: %w", prefix, err)
	if errors.Is(err, oci.ErrInvalidConfig) {
		return &errs.Stalling{Err: wrapped, Reason: reason}
	}
	return &errs.Generic{Err: wrapped, Reason: reason}
}

// pullError words a Pull failure: layer problems are the artifact's
// (OCIArtifactLayerOperationFailed), the rest the registry's.
func pullError(url string, err error) error {
	switch {
	case errors.Is(err, oci.ErrLayer):
		return &errs.Generic{Err: err, Reason: sourcev1.OCILayerOperationFailedReason}
	case errors.Is(err, oci.ErrAuth):
		return &errs.Generic{Err: fmt.Errorf("failed to pull artifact from '%s': %w", url, err), Reason: sourcev1.AuthenticationFailedReason}
	default:
		return &errs.Generic{Err: fmt.Errorf("failed to pull artifact from '%s': %w", url, err), Reason: sourcev1.OCIPullFailedReason}
	}
}

func reference(obj *sourcev1.OCIRepository) oci.Reference {
	if obj.Spec.Reference == nil {
		return oci.Reference{}
	}
	return oci.Reference(*obj.Spec.Reference)
}

// finalize removes the object's artifacts, then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, obj *sourcev1.OCIRepository) error {
	if _, err := r.Storage.RemoveAll(sourcev1.OCIRepositoryKind, obj.Namespace, obj.Name); err != nil {
		return fmt.Errorf("garbage collecting artifacts of deleted object: %w", err)
	}
	obj.Status.Artifact = nil
	obj.Status.URL = ""
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	ctrl.LoggerFrom(ctx).Info("artifacts removed, finalizer released")
	return nil
}
