package kustomization

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/scheme"
)

// TestGetSourceRefusals covers the lockdown flags with a fake client: the
// refusals happen before any read.
func TestGetSourceRefusals(t *testing.T) {
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "platform"}}
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(repo).Build()
	ks := func(kind, ns string) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "tenant"},
			Spec: kustomizev1.KustomizationSpec{SourceRef: kustomizev1.CrossNamespaceSourceReference{
				Kind: kind, Name: "shared", Namespace: ns,
			}},
		}
	}
	tests := []struct {
		name    string
		opts    Options
		obj     *kustomizev1.Kustomization
		reason  string
		message string
	}{
		{"cross-namespace allowed by default", Options{}, ks(sourcev1.GitRepositoryKind, "platform"), "", ""},
		{"cross-namespace refused", Options{NoCrossNamespaceRefs: true}, ks(sourcev1.GitRepositoryKind, "platform"),
			accessDeniedReason, "can't access 'GitRepository/platform/shared', cross-namespace references have been blocked"},
		{"ExternalArtifact behind its gate", Options{}, ks(sourcev1.ExternalArtifactKind, ""),
			accessDeniedReason, "can't access 'ExternalArtifact/tenant/shared', ExternalArtifact feature gate is disabled"},
		{"missing source retries", Options{}, ks(sourcev1.OCIRepositoryKind, ""),
			meta.ArtifactFailedReason, "Source 'OCIRepository/tenant/shared' not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{Client: c, Options: tt.opts}
			_, err := r.getSource(context.Background(), tt.obj)
			if tt.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || errs.Reason(err, "") != tt.reason || err.Error() != tt.message {
				t.Fatalf("err = %v (reason %q), want %s %q", err, errs.Reason(err, ""), tt.reason, tt.message)
			}
			if stalls := tt.reason == accessDeniedReason; errs.IsStalling(err) != stalls {
				t.Errorf("stalling = %v, want %v", errs.IsStalling(err), stalls)
			}
		})
	}
}
