package chart

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeValuesFiles(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"base.yaml":  "replicas: 1\nimage:\n  repository: app\n  tag: v1\nlist: [a, b]\nkeep: yes\n",
		"prod.yaml":  "replicas: 3\nimage:\n  tag: v2\nlist: [c]\nnulled: ~\n",
		"extra.yaml": "image:\n  pullPolicy: Always\n",
		"bad.yaml":   "image: [unclosed\n",
	})
	tests := []struct {
		name          string
		files         []string
		ignoreMissing bool
		want          map[string]any
		wantUsed      []string
		wantErr       string
	}{
		{name: "later wins, maps merge, lists replace", files: []string{"base.yaml", "prod.yaml", "extra.yaml"},
			want: map[string]any{"replicas": float64(3), "keep": true, "nulled": nil, "list": []any{"c"},
				"image": map[string]any{"repository": "app", "tag": "v2", "pullPolicy": "Always"}},
			wantUsed: []string{"base.yaml", "prod.yaml", "extra.yaml"}},
		{name: "order matters", files: []string{"prod.yaml", "base.yaml"},
			want: map[string]any{"replicas": float64(1), "keep": true, "nulled": nil, "list": []any{"a", "b"},
				"image": map[string]any{"repository": "app", "tag": "v1"}},
			wantUsed: []string{"prod.yaml", "base.yaml"}},
		{name: "missing fails", files: []string{"base.yaml", "missing.yaml"},
			wantErr: "no values file found at path '/missing.yaml' (reference 'missing.yaml')"},
		{name: "missing ignored", files: []string{"missing.yaml", "extra.yaml"}, ignoreMissing: true,
			want:     map[string]any{"image": map[string]any{"pullPolicy": "Always"}},
			wantUsed: []string{"extra.yaml"}},
		{name: "escape is not a missing file", files: []string{"../etc/passwd"}, ignoreMissing: true,
			wantErr: "path escapes the source root"},
		{name: "invalid yaml", files: []string{"bad.yaml"}, wantErr: "unmarshaling values from 'bad.yaml' failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, used, err := MergeValuesFiles(root, tt.files, tt.ignoreMissing, Limits{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("merged values (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantUsed, used); d != "" {
				t.Errorf("used files (-want +got):\n%s", d)
			}
		})
	}
}

func TestEffectiveValuesFiles(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{"values.yaml"}, nil},
		{[]string{"./values.yaml"}, nil},
		{[]string{"values.yaml", "prod.yaml"}, []string{"values.yaml", "prod.yaml"}},
		{[]string{"prod.yaml"}, []string{"prod.yaml"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, EffectiveValuesFiles(tt.in)); d != "" {
			t.Errorf("EffectiveValuesFiles(%v) (-want +got):\n%s", tt.in, d)
		}
	}
}
