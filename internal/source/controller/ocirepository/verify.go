package ocirepository

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// verify checks res's signature as spec.verify asks and returns the name of
// the key that verified it. It does nothing (and returns "") when
// verification is off, or when the stored artifact already has this
// revision and was verified at the current generation, as Flux does.
func (r *Reconciler) verify(ctx context.Context, obj *sourcev1.OCIRepository, remote oci.Remote, res *oci.Resolved) (string, error) {
	v := obj.Spec.Verify
	if v == nil || !needsVerification(obj, res.Revision) {
		return "", nil
	}
	switch {
	case v.Provider == sourcev1.VerificationProviderNotation:
		return "", verifyError(true, v.Provider, "notation verification is not supported yet by weir")
	case v.Provider != "" && v.Provider != sourcev1.VerificationProviderCosign:
		return "", verifyError(true, v.Provider, fmt.Sprintf("unsupported verification provider: %s", v.Provider))
	case v.SecretRef == nil:
		return "", verifyError(true, "cosign keyless",
			"keyless verification (matchOIDCIdentity) is not supported yet by weir; list the public keys in spec.verify.secretRef")
	}
	secret, err := r.secret(ctx, obj.Namespace, v.SecretRef.Name)
	if err != nil {
		return "", verifyError(false, "cosign", err.Error())
	}
	keys, err := oci.NewCosignKeys(secret.Data)
	if err != nil {
		return "", verifyError(false, "cosign", err.Error())
	}
	key, err := remote.VerifyCosign(res, keys)
	if err != nil {
		return "", verifyError(false, "cosign", err.Error())
	}
	return key, nil
}

// verifyError words a failed verification as Flux does. Unsupported setups
// stall: retrying cannot make them work.
func verifyError(stall bool, provider, detail string) error {
	err := fmt.Errorf("failed to verify the signature using provider '%s': %s", provider, detail)
	if stall {
		return &errs.Stalling{Err: err, Reason: sourcev1.VerificationError}
	}
	return &errs.Generic{Err: err, Reason: sourcev1.VerificationError}
}

// needsVerification reports whether revision must be verified now: it is
// not the stored artifact's, or the last verification failed or was made
// for an older generation of the spec.
func needsVerification(obj *sourcev1.OCIRepository, revision string) bool {
	c := conditions.Get(obj, sourcev1.SourceVerifiedCondition)
	return !obj.Status.Artifact.HasRevision(revision) || c == nil ||
		c.Status != metav1.ConditionTrue || c.ObservedGeneration != obj.Generation
}
