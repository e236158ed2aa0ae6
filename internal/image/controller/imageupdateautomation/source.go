package imageupdateautomation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/source/git"
)

// gitSource is everything a run needs to check out, commit and push.
type gitSource struct {
	repo           client.ObjectKey // the GitRepository
	url            string
	auth           *git.Auth
	timeout        time.Duration
	checkoutBranch string
	pushBranch     string
	refspec        string
	options        map[string]string
	signer         git.Signer
}

// switchBranch reports whether commits go to another branch than the one
// checked out.
func (s *gitSource) switchBranch() bool { return s.pushBranch != s.checkoutBranch }

// source reads the GitRepository and the Secrets it and the automation
// name, and works out the branches.
func (r *Reconciler) source(ctx context.Context, obj *imagev1.ImageUpdateAutomation) (*gitSource, error) {
	ref := obj.Spec.SourceRef
	if ref.Kind != imagev1.GitRepositoryKind {
		return nil, stalled(imagev1.InvalidSourceConfigReason, "source kind '%s' not supported: invalid source configuration", ref.Kind)
	}
	if obj.Spec.GitSpec == nil {
		return nil, stalled(imagev1.InvalidSourceConfigReason, "source kind '%s' necessitates field .spec.git: invalid source configuration", ref.Kind)
	}
	key := client.ObjectKey{Namespace: obj.Namespace, Name: ref.Name}
	if ref.Namespace != "" {
		key.Namespace = ref.Namespace
	}
	if r.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
		return nil, stalled(meta.AccessDeniedReason, "can't access '%s/%s', cross-namespace references have been blocked", ref.Kind, key)
	}
	var repo sourcev1.GitRepository
	if err := r.Client.Get(ctx, key, &repo); err != nil {
		return nil, failed(imagev1.SourceManagerFailedReason,
			fmt.Errorf("failed configuring source manager: unable to get source '%s': %w", key, err))
	}
	src, err := branches(obj.Spec.GitSpec, &repo)
	if err != nil {
		return nil, err
	}
	src.repo, src.url, src.timeout = key, repo.Spec.URL, repo.GetTimeout()
	if src.auth, err = r.auth(ctx, &repo); err != nil {
		return nil, failed(imagev1.SourceManagerFailedReason, fmt.Errorf("failed configuring source manager: %w", err))
	}
	if src.signer, err = r.signer(ctx, obj); err != nil {
		return nil, failed(imagev1.SourceManagerFailedReason, fmt.Errorf("failed configuring source manager: %w", err))
	}
	return src, nil
}

// branches works out the checkout and push branches: spec.git.checkout.ref
// or the GitRepository's ref, then spec.git.push.branch or the checkout
// branch.
func branches(spec *imagev1.GitSpec, repo *sourcev1.GitRepository) (*gitSource, error) {
	var branch string
	if spec.Checkout != nil {
		r := spec.Checkout.Reference
		if r.Tag != "" || r.SemVer != "" || r.Commit != "" || r.Name != "" {
			return nil, notBranch()
		}
		branch = r.Branch
	} else {
		r := repo.GetReference()
		if r.Tag != "" || r.SemVer != "" || r.Commit != "" || r.Name != "" {
			return nil, notBranch()
		}
		branch = r.Branch
	}
	src := &gitSource{checkoutBranch: branch, pushBranch: branch}
	if p := spec.Push; p != nil {
		if p.Branch != "" {
			src.pushBranch = p.Branch
		}
		src.refspec, src.options = p.Refspec, p.Options
	}
	if src.checkoutBranch == "" {
		return nil, stalled(imagev1.InvalidSourceConfigReason,
			"push spec not provided, and cannot be inferred from .spec.git.checkout.ref or GitRepository .spec.ref: invalid source configuration")
	}
	return src, nil
}

func notBranch() error {
	return stalled(imagev1.InvalidSourceConfigReason,
		"weir checks out branches only: the checkout ref names a tag, semver range, commit or reference name: invalid source configuration")
}

// auth reads the GitRepository's spec.secretRef and spec.proxySecretRef,
// as the source controller does; for provider github the push presents an
// installation token of the Secret's GitHub App.
func (r *Reconciler) auth(ctx context.Context, repo *sourcev1.GitRepository) (*git.Auth, error) {
	github := repo.GetProvider() == sourcev1.GitProviderGitHub
	if github && repo.Spec.SecretRef == nil {
		return nil, stalled(imagev1.InvalidSourceConfigReason, "%s: invalid source configuration", git.ErrNoGitHubApp)
	}
	var data map[string][]byte
	if repo.Spec.SecretRef != nil {
		s, err := r.secret(ctx, repo.Namespace, repo.Spec.SecretRef.Name)
		if err != nil {
			return nil, err
		}
		data = s.Data
	}
	auth, err := git.NewAuth(repo.Spec.URL, data)
	if err != nil {
		return nil, fmt.Errorf("failed to configure authentication options: %w", err)
	}
	if repo.Spec.ProxySecretRef != nil {
		s, err := r.secret(ctx, repo.Namespace, repo.Spec.ProxySecretRef.Name)
		if err != nil {
			return nil, err
		}
		if auth.Proxy, err = git.NewProxy(s.Data); err != nil {
			return nil, fmt.Errorf("invalid proxy secret '%s/%s': %w", repo.Namespace, s.Name, err)
		}
	}
	if repo.GetProvider() == sourcev1.GitProviderAzure {
		return auth, r.useAzureDevOps(ctx, auth, repo)
	}
	if github {
		err := auth.UseGitHubApp(ctx, cmp.Or(r.GitHubApps, githubapp.Default), data)
		if errors.Is(err, git.ErrNoGitHubApp) {
			return nil, stalled(imagev1.InvalidSourceConfigReason, "%s: invalid source configuration", err)
		}
		if err != nil {
			return nil, fmt.Errorf("failed to configure authentication options: %w", err)
		}
	}
	return auth, nil
}

// Keys of the signing key Secret (Flux's).
const (
	signingKeyPGP        = "git.asc"
	signingKeyPassphrase = "passphrase"
	signingKeySSH        = "identity"
	signingKeyPassword   = "password"
)

// signer reads spec.git.commit.signingKey; nil when unset.
func (r *Reconciler) signer(ctx context.Context, obj *imagev1.ImageUpdateAutomation) (git.Signer, error) {
	key := obj.Spec.GitSpec.Commit.SigningKey
	if key == nil {
		return nil, nil
	}
	s, err := r.secret(ctx, obj.Namespace, key.SecretRef.Name)
	if err != nil {
		return nil, err
	}
	if key.GetType() == imagev1.SigningKeyTypeSSH {
		pemData, ok := s.Data[signingKeySSH]
		if !ok {
			return nil, fmt.Errorf("signing key secret '%s/%s' has no '%s'", s.Namespace, s.Name, signingKeySSH)
		}
		return git.NewSSHSigner(pemData, s.Data[signingKeyPassword])
	}
	ring, ok := s.Data[signingKeyPGP]
	if !ok {
		return nil, fmt.Errorf("signing key secret '%s/%s' has no '%s'", s.Namespace, s.Name, signingKeyPGP)
	}
	return git.NewPGPSigner(ring, string(s.Data[signingKeyPassphrase]), "")
}

func (r *Reconciler) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	var s corev1.Secret
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("failed to get secret '%s/%s': %w", namespace, name, err)
	}
	return &s, nil
}

// useAzureDevOps makes the push present an Entra token for Azure DevOps
// (provider azure) of the GitRepository's serviceAccountName, the
// lockdown default or the controller, as the source controller does.
func (r *Reconciler) useAzureDevOps(ctx context.Context, a *git.Auth, repo *sourcev1.GitRepository) error {
	id, err := r.Auth.IdentityFor(repo.Namespace, repo.Spec.ServiceAccountName)
	if errors.Is(err, auth.ErrObjectLevelDisabled) {
		return stalled(meta.FeatureGateDisabledReason, "to use spec.serviceAccountName for provider authentication please enable the %s feature gate in the controller", auth.FeatureGate)
	}
	if err == nil {
		err = a.UseAzureDevOps(ctx, cmp.Or(r.Azure, azure.Default), r.Auth, id)
	}
	if err != nil {
		return fmt.Errorf("failed to configure authentication options: %w", err)
	}
	return nil
}
