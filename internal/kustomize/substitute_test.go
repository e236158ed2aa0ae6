package kustomize

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
)

func objectsFromYAML(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		j, err := yaml.YAMLToJSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		o, err := objectFromJSON(j)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

const varsCM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: apps
data:
  env: ${cluster_env:=dev}
  region: "${cluster_region}"
  literal: $${cluster_region}
  script: echo $HOME
`

func TestSubstitute(t *testing.T) {
	disabledByAnnotation := `apiVersion: v1
kind: ConfigMap
metadata:
  name: raw
  annotations:
    kustomize.toolkit.fluxcd.io/substitute: disabled
data:
  v: ${cluster_region}
`
	disabledByLabel := strings.Replace(disabledByAnnotation, "annotations:", "labels:", 1)
	numbers := `apiVersion: v1
kind: ConfigMap
metadata:
  name: n
data:
  quoted: "${replicas}"
  idiom: ${quote}${replicas}${quote}
`

	tests := []struct {
		name    string
		docs    []string
		vars    map[string]string
		opts    SubstituteOptions
		want    []map[string]any // data of each object
		wantErr []string         // substrings of the error
		errIs   error
	}{
		{
			name: "defaults, values and escapes",
			docs: []string{varsCM},
			vars: map[string]string{"cluster_region": "eu-central-1"},
			want: []map[string]any{{"env": "dev", "region": "eu-central-1", "literal": "${cluster_region}", "script": "echo $HOME"}},
		},
		{
			name: "inline value wins over the default",
			docs: []string{varsCM},
			vars: map[string]string{"cluster_region": "r", "cluster_env": "prod"},
			want: []map[string]any{{"env": "prod", "region": "r", "literal": "${cluster_region}", "script": "echo $HOME"}},
		},
		{
			name:    "strict: undefined variable fails naming it and the object",
			docs:    []string{varsCM},
			vars:    map[string]string{"other": "x"},
			wantErr: []string{`"cluster_region"`, "ConfigMap/apps/app"},
			errIs:   ErrVariableNotSet,
		},
		{
			// The source quoted "${cluster_region}", but substitution works
			// on the re-rendered YAML where it is plain: empty means null.
			name: "non-strict: undefined variable becomes empty",
			docs: []string{varsCM},
			vars: map[string]string{"other": "x"},
			opts: SubstituteOptions{AllowUndefined: true},
			want: []map[string]any{{"env": "dev", "region": nil, "literal": "${cluster_region}", "script": "echo $HOME"}},
		},
		{
			name: "WithVariables: no variables, no substitution",
			docs: []string{varsCM},
			want: []map[string]any{{"env": "${cluster_env:=dev}", "region": "${cluster_region}", "literal": "$${cluster_region}", "script": "echo $HOME"}},
		},
		{
			name: "Always: no variables still applies defaults (and strictness)",
			docs: []string{strings.Replace(varsCM, `"${cluster_region}"`, `"${cluster_region:=none}"`, 1)},
			opts: SubstituteOptions{Strategy: kustomizev1.SubstituteAlways},
			want: []map[string]any{{"env": "dev", "region": "none", "literal": "${cluster_region}", "script": "echo $HOME"}},
		},
		{
			name:    "Always with an undefined variable is strict",
			docs:    []string{varsCM},
			opts:    SubstituteOptions{Strategy: kustomizev1.SubstituteAlways},
			wantErr: []string{`"cluster_region"`},
			errIs:   ErrVariableNotSet,
		},
		{
			name: "disabled by annotation or label",
			docs: []string{disabledByAnnotation, disabledByLabel},
			vars: map[string]string{"cluster_region": "r"},
			want: []map[string]any{{"v": "${cluster_region}"}, {"v": "${cluster_region}"}},
		},
		{
			name:    "invalid variable name",
			docs:    []string{varsCM},
			vars:    map[string]string{"cluster-region": "r"},
			wantErr: []string{"'cluster-region' var name is invalid", varNamePattern},
		},
		{
			name: "invalid name unchecked when every object is disabled",
			docs: []string{disabledByAnnotation},
			vars: map[string]string{"1bad": "r"},
			want: []map[string]any{{"v": "${cluster_region}"}},
		},
		{
			name: "newlines are removed from values",
			docs: []string{varsCM},
			vars: map[string]string{"cluster_region": "eu-\ncentral-1\n"},
			want: []map[string]any{{"env": "dev", "region": "eu-central-1", "literal": "${cluster_region}", "script": "echo $HOME"}},
		},
		{
			name: "quotes in the source do not survive; the quote idiom does",
			docs: []string{numbers},
			vars: map[string]string{"replicas": "3", "quote": `"`},
			want: []map[string]any{{"quoted": int64(3), "idiom": "3"}},
		},
		{
			name:    "syntax error names the object",
			docs:    []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  v: ${oops\n"},
			vars:    map[string]string{"x": "y"},
			wantErr: []string{"ConfigMap/bad", "variable substitution failed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := objectsFromYAML(t, tt.docs...)
			before, _ := ToYAML(in)
			out, err := Substitute(in, tt.vars, tt.opts)
			after, _ := ToYAML(in)
			if string(before) != string(after) {
				t.Error("Substitute modified its input")
			}
			if tt.wantErr != nil || tt.errIs != nil {
				if err == nil {
					t.Fatal("want an error")
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				if tt.errIs != nil && !errors.Is(err, tt.errIs) {
					t.Errorf("error %v is not %v", err, tt.errIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			for _, o := range out {
				d, _, _ := unstructured.NestedFieldNoCopy(o.Object, "data")
				got = append(got, d.(map[string]any))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}
