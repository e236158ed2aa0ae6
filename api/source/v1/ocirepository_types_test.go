package v1

import "testing"

func TestOCIRepositoryLayerSelector(t *testing.T) {
	tests := []struct {
		name          string
		selector      *OCILayerSelector
		wantMediaType string
		wantOperation string
	}{
		{"no selector", nil, "", OCILayerExtract},
		{"media type only", &OCILayerSelector{MediaType: OCIArtifactLayerMediaType}, OCIArtifactLayerMediaType, OCILayerExtract},
		{"copy", &OCILayerSelector{MediaType: "application/x-tar", Operation: OCILayerCopy}, "application/x-tar", OCILayerCopy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := &OCIRepository{Spec: OCIRepositorySpec{LayerSelector: tt.selector}}
			if got := repo.GetLayerMediaType(); got != tt.wantMediaType {
				t.Errorf("GetLayerMediaType() = %q, want %q", got, tt.wantMediaType)
			}
			if got := repo.GetLayerOperation(); got != tt.wantOperation {
				t.Errorf("GetLayerOperation() = %q, want %q", got, tt.wantOperation)
			}
		})
	}
}
