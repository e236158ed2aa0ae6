package objectview

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/helm/release"
)

func TestOriginsOf(t *testing.T) {
	cm := &helmv2.ValuesReference{Kind: "ConfigMap", Name: "base"}
	secret := &helmv2.ValuesReference{Kind: "Secret", Name: "creds", ValuesKey: "token", TargetPath: "image.token"}
	tests := []struct {
		name   string
		merged map[string]any
		layers []release.Layer
		masked map[string]any
		want   []ValueOrigin
	}{
		{"the last layer to set a leaf owns it", map[string]any{"a": 2, "b": 1},
			[]release.Layer{{Ref: cm, Values: map[string]any{"a": 1, "b": 1}}, {Values: map[string]any{"a": 2}}},
			map[string]any{"a": 2, "b": 1},
			[]ValueOrigin{{Key: "a", From: []string{"values"}}, {Key: "b", From: []string{"ConfigMap/base key values.yaml"}}}},
		{"a Secret's leaf is masked, its neighbours are not", map[string]any{"image": map[string]any{"tag": "1", "token": "s3cr3t"}},
			[]release.Layer{{Ref: cm, Values: map[string]any{"image": map[string]any{"tag": "1"}}},
				{Ref: secret, Values: map[string]any{"image": map[string]any{"token": "s3cr3t"}}}, {Values: nil}},
			map[string]any{"image": map[string]any{"tag": "1", "token": Masked}},
			[]ValueOrigin{{Key: "image", From: []string{"ConfigMap/base key values.yaml", "Secret/creds key token at image.token"}, Masked: true}}},
		{"a map replaced by a scalar", map[string]any{"ui": "plain"},
			[]release.Layer{{Ref: cm, Values: map[string]any{"ui": map[string]any{"color": "red"}}}, {Values: map[string]any{"ui": "plain"}}},
			map[string]any{"ui": "plain"},
			[]ValueOrigin{{Key: "ui", From: []string{"values"}}}},
		{"a skipped optional layer owns nothing", map[string]any{"x": true},
			[]release.Layer{{Ref: cm, Skipped: true}, {Values: map[string]any{"x": true}}},
			map[string]any{"x": true},
			[]ValueOrigin{{Key: "x", From: []string{"values"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			masked, got := originsOf(tt.merged, tt.layers)
			if diff := cmp.Diff(tt.masked, masked); diff != "" {
				t.Errorf("masked values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("origins (-want +got):\n%s", diff)
			}
		})
	}
}
