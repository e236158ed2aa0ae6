package gitrepository

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/git"
)

// Reconciler reconciles GitRepository objects.
type Reconciler struct {
	source.Deps
	Git git.Client
}

func defaultGitClient() git.Client { return git.NewClient() }

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.Run(ctx, r.Driver(), req, &sourcev1.GitRepository{}, reconcile.Hooks[*sourcev1.GitRepository]{
		Kind:      sourcev1.GitRepositoryKind,
		Suspended: func(obj *sourcev1.GitRepository) bool { return obj.Spec.Suspend },
		Finalize:  r.finalize,
		Reconcile: func(ctx context.Context, obj *sourcev1.GitRepository) error {
			out, err := r.reconcile(ctx, obj)
			applyStatus(obj, out, err)
			r.recordEvents(ctx, obj, out, err)
			return err
		},
	})
}

// outcome is what the phases observed; applyStatus turns it into status.
type outcome struct {
	// revision upstream points at now, when it could be resolved.
	revision string
	// artifact is the stored artifact after this run (new or kept).
	artifact *meta.Artifact
	// commit is the checked-out commit; nil when the clone was skipped.
	commit *git.Commit
	// verifiedBy names the key that verified the commit/tag, if verified.
	verifiedBy string
	// includes are the artifacts of spec.include, in order.
	includes []meta.Artifact
	// newArtifact is true when this run stored a new file.
	newArtifact bool
}

// reconcile runs the phases in order and stops at the first error.
func (r *Reconciler) reconcile(ctx context.Context, obj *sourcev1.GitRepository) (*outcome, error) {
	out := &outcome{artifact: obj.Status.Artifact}
	if err := source.Begin(ctx, obj, obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt); err != nil {
		return out, err
	}
	ctx, cancel := context.WithTimeout(ctx, obj.GetTimeout())
	defer cancel()

	if p := obj.GetProvider(); p != sourcev1.GitProviderGeneric {
		return out, &errs.Stalling{
			Err:    fmt.Errorf("provider '%s' is not supported by weir yet: use provider 'generic' with a secretRef", p),
			Reason: sourcev1.InvalidProviderConfigurationReason,
		}
	}
	auth, err := r.auth(ctx, obj)
	if err != nil {
		return out, err
	}
	remote := r.Git.Remote(ctx, obj.Spec.URL, auth)
	ref := reference(obj)
	if out.revision, err = remote.Resolve(ref); err != nil {
		return out, fetchError(err)
	}
	includes, err := r.includes(ctx, obj)
	if err != nil {
		return out, err
	}
	out.includes = includes
	if r.upToDate(obj, out) {
		return out, nil
	}
	if err := source.Building(ctx, obj, out.revision); err != nil {
		return out, err
	}
	return out, r.fetchAndStore(ctx, obj, remote, ref, out)
}

// upToDate reports whether the stored artifact already holds what the spec
// and upstream ask for, so the clone can be skipped.
func (r *Reconciler) upToDate(obj *sourcev1.GitRepository, out *outcome) bool {
	a := obj.Status.Artifact
	if a == nil || a.Revision != out.revision || !r.Storage.Exists(*a) {
		return false
	}
	if obj.Spec.Verification != nil && obj.Status.SourceVerificationMode == nil {
		return false
	}
	return observedSpecUnchanged(obj, out.includes)
}

func (r *Reconciler) fetchAndStore(ctx context.Context, obj *sourcev1.GitRepository, remote git.Remote, ref git.Reference, out *outcome) error {
	dir, err := tempDir(obj)
	if err != nil {
		return &errs.Generic{Err: err, Reason: sourcev1.DirCreationFailedReason}
	}
	defer removeAll(dir)

	commit, err := remote.Clone(dir, git.CloneOptions{
		Reference:         ref,
		SparseCheckout:    obj.Spec.SparseCheckout,
		RecurseSubmodules: obj.Spec.RecurseSubmodules,
	})
	if err != nil {
		return fetchError(err)
	}
	out.commit, out.revision = commit, commit.Revision
	if out.verifiedBy, err = r.verify(ctx, obj, commit); err != nil {
		return err
	}
	if err := r.copyIncludes(obj, out.includes, dir); err != nil {
		return err
	}
	filter, err := artifact.NewFilter(dir, obj.Spec.Ignore)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("reading ignore rules: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
	}

	unlock, err := r.Storage.Lock(ctx, sourcev1.GitRepositoryKind, obj.Namespace, obj.Name)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to acquire lock for artifact: %w", err), Reason: sourcev1.AcquireLockFailedReason}
	}
	defer unlock()
	a := r.Storage.NewArtifactFor(sourcev1.GitRepositoryKind, obj, out.revision, commit.Hash+".tar.gz")
	if _, err := r.Storage.Archive(ctx, &a, dir, filter); err != nil {
		return &errs.Generic{Err: fmt.Errorf("unable to archive artifact to storage: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
	}
	out.artifact, out.newArtifact = &a, true
	if _, err := r.Storage.GarbageCollect(ctx, a, r.RetentionRecords, r.RetentionTTL); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "garbage collection of old artifacts failed")
	}
	return nil
}

// auth reads spec.secretRef and spec.proxySecretRef.
func (r *Reconciler) auth(ctx context.Context, obj *sourcev1.GitRepository) (*git.Auth, error) {
	var data map[string][]byte
	if obj.Spec.SecretRef != nil {
		secret, err := r.secret(ctx, obj.Namespace, obj.Spec.SecretRef.Name)
		if err != nil {
			return nil, &errs.Generic{Err: err, Reason: sourcev1.AuthenticationFailedReason}
		}
		data = secret.Data
	}
	auth, err := git.NewAuth(obj.Spec.URL, data)
	if err != nil {
		if errors.Is(err, git.ErrInvalidConfig) && obj.Spec.SecretRef == nil {
			return nil, &errs.Stalling{Err: err, Reason: sourcev1.URLInvalidReason}
		}
		return nil, &errs.Generic{Err: fmt.Errorf("failed to configure authentication options: %w", err), Reason: sourcev1.AuthenticationFailedReason}
	}
	if obj.Spec.ProxySecretRef != nil {
		secret, err := r.secret(ctx, obj.Namespace, obj.Spec.ProxySecretRef.Name)
		if err != nil {
			return nil, &errs.Generic{Err: err, Reason: sourcev1.AuthenticationFailedReason}
		}
		if auth.Proxy, err = git.NewProxy(secret.Data); err != nil {
			return nil, &errs.Generic{Err: fmt.Errorf("invalid proxy secret '%s/%s': %w", obj.Namespace, secret.Name, err), Reason: sourcev1.AuthenticationFailedReason}
		}
	}
	return auth, nil
}

func (r *Reconciler) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("failed to get secret '%s/%s': %w", namespace, name, err)
	}
	return &s, nil
}

// verify checks signatures as spec.verify asks and returns the key used.
func (r *Reconciler) verify(ctx context.Context, obj *sourcev1.GitRepository, commit *git.Commit) (string, error) {
	if obj.Spec.Verification == nil {
		return "", nil
	}
	secret, err := r.secret(ctx, obj.Namespace, obj.Spec.Verification.SecretRef.Name)
	if err != nil {
		return "", &errs.Generic{Err: err, Reason: sourcev1.VerificationError}
	}
	keys, err := git.NewKeyRing(secret.Data)
	if err != nil {
		return "", &errs.Generic{Err: fmt.Errorf("invalid verification secret: %w", err), Reason: sourcev1.VerificationError}
	}
	mode := obj.Spec.Verification.GetMode()
	var ids []string
	if mode == sourcev1.ModeGitTag || mode == sourcev1.ModeGitTagAndHEAD {
		if commit.Tag == nil {
			return "", &errs.Stalling{Err: fmt.Errorf("cannot verify tag: spec.ref does not name an annotated tag"), Reason: sourcev1.VerificationError}
		}
		id, err := git.VerifyTag(commit.Tag, keys)
		if err != nil {
			return "", &errs.Generic{Err: fmt.Errorf("signature verification of tag '%s' failed: %w", commit.Tag.Name, err), Reason: sourcev1.VerificationError}
		}
		ids = append(ids, id)
	}
	if mode == sourcev1.ModeGitHEAD || mode == sourcev1.ModeGitTagAndHEAD {
		id, err := git.VerifyCommit(commit, keys)
		if err != nil {
			return "", &errs.Generic{Err: fmt.Errorf("signature verification of commit '%s' failed: %w", commit.Hash, err), Reason: sourcev1.VerificationError}
		}
		ids = append(ids, id)
	}
	return joinIDs(ids), nil
}

// fetchError classifies a Git error: bad configuration stalls, everything
// else is retried.
func fetchError(err error) error {
	switch {
	case errors.Is(err, git.ErrInvalidConfig):
		return &errs.Stalling{Err: fmt.Errorf("invalid git configuration: %w", err), Reason: sourcev1.URLInvalidReason}
	case errors.Is(err, git.ErrAuth):
		return &errs.Generic{Err: fmt.Errorf("failed to checkout and determine revision: %w", err), Reason: sourcev1.AuthenticationFailedReason}
	default:
		return &errs.Generic{Err: fmt.Errorf("failed to checkout and determine revision: %w", err), Reason: sourcev1.GitOperationFailedReason}
	}
}

func reference(obj *sourcev1.GitRepository) git.Reference {
	ref := obj.GetReference()
	return git.Reference{Branch: ref.Branch, Tag: ref.Tag, SemVer: ref.SemVer, Name: ref.Name, Commit: ref.Commit}
}

// finalize removes the object's artifacts, then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, obj *sourcev1.GitRepository) error {
	if _, err := r.Storage.RemoveAll(sourcev1.GitRepositoryKind, obj.Namespace, obj.Name); err != nil {
		return fmt.Errorf("garbage collecting artifacts of deleted object: %w", err)
	}
	obj.Status.Artifact = nil
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	ctrl.LoggerFrom(ctx).Info("artifacts removed, finalizer released")
	return nil
}
