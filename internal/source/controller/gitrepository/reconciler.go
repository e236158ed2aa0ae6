package gitrepository

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/githubapp"
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
	// GitHubApps keeps the installation tokens of provider github;
	// githubapp.Default when nil.
	GitHubApps *githubapp.Cache
	// Azure gets the Entra tokens of provider azure; azure.Default when
	// nil.
	Azure *azure.Provider
}

func defaultGitClient() git.Client { return git.NewClient() }

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.Run(ctx, r.Driver(), req, &sourcev1.GitRepository{}, r.kind())
}

// kind is the GitRepository as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*sourcev1.GitRepository, *outcome] {
	return reconcile.Kind[*sourcev1.GitRepository, *outcome]{
		Name:       sourcev1.GitRepositoryKind,
		Conditions: conditionTypes,
		Suspended:  func(obj *sourcev1.GitRepository) bool { return obj.Spec.Suspend },
		Finalize:   r.finalize,
		Begin: func(_ context.Context, obj *sourcev1.GitRepository) *outcome {
			return &outcome{artifact: obj.Status.Artifact}
		},
		Timeout: func(obj *sourcev1.GitRepository) time.Duration { return obj.GetTimeout() },
		Phases:  []reconcile.Phase[*sourcev1.GitRepository, *outcome]{r.begin, r.resolve, r.includePhase, r.fetchAndStore},
		Status:  applyStatus,
		Events:  r.recordEvents,
	}
}

// outcome is what the phases observed and share; applyStatus turns it into
// status.
type outcome struct {
	// remote and ref are the repository and the reference to fetch.
	remote git.Remote
	ref    git.Reference
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

// begin shows a new generation or a reconcile request as in progress.
func (r *Reconciler) begin(ctx context.Context, obj *sourcev1.GitRepository, _ *outcome) error {
	return source.Begin(ctx, obj, obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
}

// resolve finds the revision upstream points at.
func (r *Reconciler) resolve(ctx context.Context, obj *sourcev1.GitRepository, out *outcome) error {
	if p := obj.GetProvider(); p == sourcev1.GitProviderAWS {
		return &errs.Stalling{
			Err:    fmt.Errorf("provider '%s' is not supported by weir yet: use provider 'generic', 'azure' or 'github'", p),
			Reason: sourcev1.InvalidProviderConfigurationReason,
		}
	}
	auth, err := r.auth(ctx, obj)
	if err != nil {
		return err
	}
	out.remote, out.ref = r.Git.Remote(ctx, obj.Spec.URL, auth), reference(obj)
	if out.revision, err = out.remote.Resolve(out.ref); err != nil {
		return fetchError(err)
	}
	return nil
}

// includePhase reads the artifacts spec.include names; when the stored
// artifact already holds what the spec and upstream ask for, the run ends
// here and nothing is cloned.
func (r *Reconciler) includePhase(ctx context.Context, obj *sourcev1.GitRepository, out *outcome) error {
	includes, err := r.includes(ctx, obj)
	if err != nil {
		return err
	}
	out.includes = includes
	if r.upToDate(obj, out) {
		return reconcile.Stop
	}
	return source.Building(ctx, obj, out.revision)
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

// fetchAndStore clones the revision, verifies it and stores it as the
// artifact.
func (r *Reconciler) fetchAndStore(ctx context.Context, obj *sourcev1.GitRepository, out *outcome) error {
	dir, err := tempDir(obj)
	if err != nil {
		return &errs.Generic{Err: err, Reason: sourcev1.DirCreationFailedReason}
	}
	defer removeAll(dir)

	commit, err := out.remote.Clone(dir, git.CloneOptions{
		Reference:         out.ref,
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

// auth reads spec.secretRef and spec.proxySecretRef and, for provider
// github, trades the Secret's GitHub App credentials for an installation
// token, with Flux's reasons and messages.
func (r *Reconciler) auth(ctx context.Context, obj *sourcev1.GitRepository) (*git.Auth, error) {
	provider := obj.GetProvider()
	if provider == sourcev1.GitProviderGitHub && obj.Spec.SecretRef == nil {
		return nil, &errs.Stalling{Err: git.ErrNoGitHubApp, Reason: sourcev1.InvalidProviderConfigurationReason}
	}
	var data map[string][]byte
	if obj.Spec.SecretRef != nil {
		secret, err := r.secret(ctx, obj.Namespace, obj.Spec.SecretRef.Name)
		if err != nil {
			return nil, &errs.Generic{Err: err, Reason: sourcev1.AuthenticationFailedReason}
		}
		data = secret.Data
	}
	if provider != sourcev1.GitProviderGitHub && git.HasGitHubApp(data) {
		return nil, &errs.Generic{
			Err:    fmt.Errorf("secretRef '%s/%s' has github app data but provider is not set to github", obj.Namespace, obj.Spec.SecretRef.Name),
			Reason: sourcev1.InvalidProviderConfigurationReason,
		}
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
	switch provider {
	case sourcev1.GitProviderGitHub:
		return auth, r.useGitHubApp(ctx, auth, data)
	case sourcev1.GitProviderAzure:
		return auth, r.useAzureDevOps(ctx, auth, obj)
	}
	return auth, nil
}

// useAzureDevOps makes auth present an Entra token for Azure DevOps of
// spec.serviceAccountName's identity (the ObjectLevelWorkloadIdentity
// gate, the lockdown default) or the controller's.
func (r *Reconciler) useAzureDevOps(ctx context.Context, auth *git.Auth, obj *sourcev1.GitRepository) error {
	id, err := r.Identity(obj.Namespace, obj.Spec.ServiceAccountName)
	if err != nil {
		return err
	}
	if err := auth.UseAzureDevOps(ctx, cmp.Or(r.Azure, azure.Default), r.Auth, id); err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to configure authentication options: %w", err), Reason: sourcev1.AuthenticationFailedReason}
	}
	return nil
}

// useGitHubApp makes auth present an installation token of the Secret's
// GitHub App.
func (r *Reconciler) useGitHubApp(ctx context.Context, auth *git.Auth, data map[string][]byte) error {
	err := auth.UseGitHubApp(ctx, cmp.Or(r.GitHubApps, githubapp.Default), data)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, git.ErrNoGitHubApp):
		return &errs.Generic{Err: err, Reason: sourcev1.InvalidProviderConfigurationReason}
	default:
		return &errs.Generic{Err: fmt.Errorf("failed to configure authentication options: %w", err), Reason: sourcev1.AuthenticationFailedReason}
	}
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
