package helmchart

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/chart"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// ociRepository is the chart repository of an OCI HelmRepository, with
// spec.verify's cosign keys when set: the chart's signature is checked on
// every reconcile, with the verifier the OCIRepository controller uses.
func (r *Reconciler) ociRepository(ctx context.Context, obj *sourcev1.HelmChart, c *helmrepo.Client) (*chart.OCIRepository, error) {
	o := &chart.OCIRepository{URL: c.URL(), Open: r.opener(c)}
	v := obj.Spec.Verify
	if v == nil {
		return o, nil
	}
	switch {
	case v.Provider == sourcev1.VerificationProviderNotation:
		return nil, verifyError(true, v.Provider, "notation verification is not supported yet by weir")
	case v.Provider != "" && v.Provider != sourcev1.VerificationProviderCosign:
		return nil, verifyError(true, v.Provider, fmt.Sprintf("unsupported verification provider: %s", v.Provider))
	case v.SecretRef == nil:
		return nil, verifyError(true, "cosign keyless",
			"keyless verification (matchOIDCIdentity) is not supported yet by weir; list the public keys in spec.verify.secretRef")
	}
	var secret corev1.Secret
	key := types.NamespacedName{Namespace: obj.Namespace, Name: v.SecretRef.Name}
	if err := r.APIReader.Get(ctx, key, &secret); err != nil {
		return nil, verifyError(false, "cosign", fmt.Sprintf("failed to get secret '%s': %s", key, err))
	}
	keys, err := oci.NewCosignKeys(secret.Data)
	if err != nil {
		return nil, verifyError(false, "cosign", err.Error())
	}
	o.Verify = func(remote oci.Remote, res *oci.Resolved) (string, error) {
		name, err := remote.VerifyCosign(res, keys)
		if err != nil {
			return "", fmt.Errorf("failed to verify the signature using provider 'cosign': %w", err)
		}
		return name, nil
	}
	return o, nil
}

// verifyError words a verification that cannot start as Flux does;
// unsupported setups stall.
func verifyError(stall bool, provider, detail string) error {
	err := fmt.Errorf("failed to verify the signature using provider '%s': %s", provider, detail)
	if stall {
		return &errs.Stalling{Err: err, Reason: sourcev1.VerificationError}
	}
	return &errs.Generic{Err: err, Reason: sourcev1.VerificationError}
}
