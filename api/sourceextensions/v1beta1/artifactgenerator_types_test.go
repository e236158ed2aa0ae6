package v1beta1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIsDisabled(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        bool
	}{
		{name: "no annotations"},
		{name: "disabled", annotations: map[string]string{ReconcileAnnotation: "disabled"}, want: true},
		{name: "case-insensitive", annotations: map[string]string{ReconcileAnnotation: "Disabled"}, want: true},
		{name: "enabled", annotations: map[string]string{ReconcileAnnotation: "enabled"}},
		{name: "other annotation", annotations: map[string]string{"example.com/reconcile": "disabled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ag := &ArtifactGenerator{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}}
			if got := ag.IsDisabled(); got != tt.want {
				t.Errorf("IsDisabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHasArtifactInInventory(t *testing.T) {
	ag := &ArtifactGenerator{Status: ArtifactGeneratorStatus{Inventory: []ExternalArtifactReference{
		{Name: "app", Namespace: "apps", Digest: "sha256:abc", Filename: "app.tar.gz"},
	}}}
	tests := []struct {
		name, objName, namespace, digest string
		want                             bool
	}{
		{name: "match", objName: "app", namespace: "apps", digest: "sha256:abc", want: true},
		{name: "other digest", objName: "app", namespace: "apps", digest: "sha256:def"},
		{name: "other namespace", objName: "app", namespace: "default", digest: "sha256:abc"},
		{name: "other name", objName: "web", namespace: "apps", digest: "sha256:abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ag.HasArtifactInInventory(tt.objName, tt.namespace, tt.digest); got != tt.want {
				t.Errorf("HasArtifactInInventory() = %v, want %v", got, tt.want)
			}
		})
	}
}
