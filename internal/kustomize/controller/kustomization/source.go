package kustomization

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// Source is a source object with an artifact.
type Source = sourcev1.Object

// accessDeniedReason is Flux's reason for a refused cross-namespace or
// gated reference.
const accessDeniedReason = "AccessDenied"

// newSource returns an empty object of a sourceRef kind, or nil.
func newSource(kind string) Source {
	switch kind {
	case sourcev1.GitRepositoryKind, sourcev1.OCIRepositoryKind, sourcev1.BucketKind, sourcev1.ExternalArtifactKind:
		return sourcev1.NewObject(kind)
	}
	return nil
}

// sourceKey names the source obj refers to.
func sourceKey(obj *kustomizev1.Kustomization) types.NamespacedName {
	ns := obj.Spec.SourceRef.Namespace
	if ns == "" {
		ns = obj.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: obj.Spec.SourceRef.Name}
}

// getSource resolves spec.sourceRef.
func (r *Reconciler) getSource(ctx context.Context, obj *kustomizev1.Kustomization) (Source, error) {
	ref, key := obj.Spec.SourceRef, sourceKey(obj)
	if r.Options.NoCrossNamespaceRefs && key.Namespace != obj.Namespace {
		return nil, &errs.Stalling{
			Err:    fmt.Errorf("can't access '%s/%s', cross-namespace references have been blocked", ref.Kind, key),
			Reason: accessDeniedReason,
		}
	}
	if ref.Kind == sourcev1.ExternalArtifactKind && !r.Options.AllowExternalArtifact {
		return nil, &errs.Stalling{
			Err:    fmt.Errorf("can't access '%s/%s', ExternalArtifact feature gate is disabled", ref.Kind, key),
			Reason: accessDeniedReason,
		}
	}
	src := newSource(ref.Kind)
	if src == nil {
		return nil, &errs.Stalling{
			Err:    fmt.Errorf("source `%s` kind '%s' not supported", ref.Name, ref.Kind),
			Reason: meta.ArtifactFailedReason,
		}
	}
	if err := r.Client.Get(ctx, key, src); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, r.retry(obj, meta.ArtifactFailedReason,
				fmt.Errorf("Source '%s' not found", sourceString(ref, key))) //nolint:staticcheck // Flux's message
		}
		return nil, &errs.Generic{Err: fmt.Errorf("unable to get source '%s': %w", key, err), Reason: meta.ArtifactFailedReason}
	}
	return src, nil
}

func sourceString(ref kustomizev1.CrossNamespaceSourceReference, key types.NamespacedName) string {
	return ref.Kind + "/" + key.String()
}

// sameSource reports whether a and b build from the same source object.
func sameSource(a, b *kustomizev1.Kustomization) bool {
	return a.Spec.SourceRef.Kind == b.Spec.SourceRef.Kind && sourceKey(a) == sourceKey(b)
}

// hasRevision reports whether the artifact a is at revision rev, accepting
// the older revision formats Flux accepts for the same commit or digest.
func hasRevision(a *meta.Artifact, rev string) bool {
	return a != nil && meta.SameRevision(a.Revision, rev)
}
