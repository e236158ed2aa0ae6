package kustomization

import (
	"fmt"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// checkDecryptionIdentity stalls a Kustomization whose decryption names a
// ServiceAccount while the ObjectLevelWorkloadIdentity gate is off, with
// Flux's reason and message, before anything is fetched: no retry can
// help until the controller or the spec changes.
func (r *Reconciler) checkDecryptionIdentity(obj *kustomizev1.Kustomization) error {
	d := obj.Spec.Decryption
	if d == nil || d.ServiceAccountName == "" || (r.Identity != nil && r.Identity.ObjectLevel) {
		return nil
	}
	return &errs.Stalling{
		Err:    fmt.Errorf("to use spec.decryption.serviceAccountName for decryption authentication please enable the %s feature gate in the controller", auth.FeatureGate),
		Reason: meta.FeatureGateDisabledReason,
	}
}
