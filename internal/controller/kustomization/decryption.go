package kustomization

import (
	"context"
	"fmt"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/kustomize"
)

// configureDecryption sets up SOPS decryption from spec.decryption.
func (r *Reconciler) configureDecryption(_ context.Context, obj *kustomizev1.Kustomization, _ *kustomize.BuildOptions) error {
	if obj.Spec.Decryption == nil {
		return nil
	}
	return fmt.Errorf("spec.decryption is not supported by this build of weir")
}
