package release

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

func valuesObjects() []client.Object {
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "base", Namespace: "apps"}, Data: map[string]string{
			"values.yaml": "replicas: 1\nimage:\n  tag: v1\n  pullPolicy: IfNotPresent\nlist: [a, b]\n",
			"other.yaml":  "replicas: 5\n",
			"broken":      "a: [",
		}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secret", Namespace: "apps"}, Data: map[string][]byte{
			"values.yaml": []byte("image:\n  tag: v2\npassword: s3cret\n"),
			"tag":         []byte("v3"),
			"number":      []byte("42"),
			"quoted":      []byte(`"42"`),
			"literal":     []byte("a,b=c.d"),
		}},
	}
}

func TestValues(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(valuesObjects()...).Build()
	tests := []struct {
		name    string
		from    []helmv2.ValuesReference
		inline  string
		want    map[string]any
		wantErr string
	}{
		{name: "nothing", want: map[string]any{}},
		{name: "inline only", inline: `{"a":1}`, want: map[string]any{"a": float64(1)}},
		{
			name:   "valuesFrom in order, inline on top",
			from:   []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "base"}, {Kind: "Secret", Name: "secret"}},
			inline: `{"replicas":3}`,
			want: map[string]any{"replicas": float64(3), "image": map[string]any{"tag": "v2", "pullPolicy": "IfNotPresent"},
				"list": []any{"a", "b"}, "password": "s3cret"},
		},
		{
			name: "valuesKey",
			from: []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "base"}, {Kind: "ConfigMap", Name: "base", ValuesKey: "other.yaml"}},
			want: map[string]any{"replicas": float64(5), "image": map[string]any{"tag": "v1", "pullPolicy": "IfNotPresent"}, "list": []any{"a", "b"}},
		},
		{
			name: "targetPath overrides earlier entries",
			from: []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "base"}, {Kind: "Secret", Name: "secret", ValuesKey: "tag", TargetPath: "image.tag"}},
			want: map[string]any{"replicas": float64(1), "image": map[string]any{"tag": "v3", "pullPolicy": "IfNotPresent"}, "list": []any{"a", "b"}},
		},
		{
			name: "targetPath typed, quoted and literal",
			from: []helmv2.ValuesReference{
				{Kind: "Secret", Name: "secret", ValuesKey: "number", TargetPath: "n"},
				{Kind: "Secret", Name: "secret", ValuesKey: "quoted", TargetPath: "s"},
				{Kind: "Secret", Name: "secret", ValuesKey: "literal", TargetPath: "l", Literal: true},
				{Kind: "Secret", Name: "secret", ValuesKey: "tag", TargetPath: "list[1]"},
			},
			want: map[string]any{"n": int64(42), "s": "42", "l": "a,b=c.d", "list": []any{nil, "v3"}},
		},
		{
			name:   "inline wins over targetPath",
			from:   []helmv2.ValuesReference{{Kind: "Secret", Name: "secret", ValuesKey: "tag", TargetPath: "image.tag"}},
			inline: `{"image":{"tag":"inline"}}`,
			want:   map[string]any{"image": map[string]any{"tag": "inline"}},
		},
		{
			name: "optional missing object skipped",
			from: []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "absent", Optional: true}},
			want: map[string]any{},
		},
		{
			name:    "missing object",
			from:    []helmv2.ValuesReference{{Kind: "Secret", Name: "absent"}},
			wantErr: "could not find Secret 'apps/absent'",
		},
		{
			name:    "missing key, even when optional",
			from:    []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "base", ValuesKey: "nope", Optional: true}},
			wantErr: "missing key 'nope' in ConfigMap 'apps/base'",
		},
		{
			name:    "bad YAML",
			from:    []helmv2.ValuesReference{{Kind: "ConfigMap", Name: "base", ValuesKey: "broken"}},
			wantErr: "unable to read values from key 'broken' in ConfigMap 'apps/base': ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "apps"}}
			hr.Spec.ValuesFrom = tt.from
			if tt.inline != "" {
				hr.Spec.Values = &helmv2.Values{Raw: []byte(tt.inline)}
			}
			got, err := Values(context.Background(), reader, hr)
			if tt.wantErr != "" {
				if err == nil || len(err.Error()) < len(tt.wantErr) || err.Error()[:len(tt.wantErr)] != tt.wantErr {
					t.Fatalf("error = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValuesDigest(t *testing.T) {
	a := ValuesDigest(map[string]any{"b": 1, "a": map[string]any{"y": 2, "x": 1}})
	b := ValuesDigest(map[string]any{"a": map[string]any{"x": float64(1), "y": float64(2)}, "b": float64(1)})
	if a != b {
		t.Errorf("digest depends on key order or number type: %s != %s", a, b)
	}
	if ValuesDigest(nil) != ValuesDigest(map[string]any{}) {
		t.Error("nil and empty values differ")
	}
	if ValuesChecksum(nil) != "bf21a9e8fbc5a3846fb05b4fa0859e0917b2202f" { // sha1("{}")
		t.Errorf("checksum of no values = %s", ValuesChecksum(nil))
	}
}
