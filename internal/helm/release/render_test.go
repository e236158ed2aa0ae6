package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/devenv/testenv/golden"
)

// renderChart has a ConfigMap showing the values and the action, a
// Deployment, a pre-install hook, a test hook and a CRD.
func renderChart() *chartv2.Chart {
	file := func(name, data string) *common.File { return &common.File{Name: name, Data: []byte(data)} }
	return &chartv2.Chart{
		Metadata: &chartv2.Metadata{APIVersion: "v2", Name: "app", Version: "1.2.3", AppVersion: "1.0"},
		Values:   map[string]any{"greeting": "hello", "replicas": 1},
		Templates: []*common.File{
			file("templates/cm.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
  upgrade: {{ .Release.IsUpgrade | quote }}
  namespace: {{ .Release.Namespace }}
`),
			file("templates/deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: app
        image: example.com/app:v1
`),
			file("templates/hook.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-pre
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
data: {}
`),
			file("templates/test.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  containers: [{name: t, image: busybox}]
`),
		},
		Files: []*common.File{file("crds/widgets.yaml", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`)},
	}
}

// TestRender pins what Render returns for an install and an upgrade:
// the values, post-renderers, commonMetadata, Helm's ownership marks, the
// release namespace and name rules, hooks and CRDs by policy, preserved
// values and hooks left out of post-rendering (nohooks).
func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		opts RenderOptions
	}{
		{name: "install", spec: `
targetNamespace: apps
values: {greeting: hi}
install: {crds: CreateReplace}
postRenderers:
- kustomize:
    patches:
    - target: {kind: Deployment}
      patch: |
        - op: replace
          path: /spec/replicas
          value: 3
    images:
    - {name: example.com/app, newTag: v2}
commonMetadata:
  labels: {team: platform}
`},
		{name: "upgrade", spec: `
releaseName: custom
upgrade: {disableHooks: true}
`, opts: RenderOptions{Upgrade: true}},
		{name: "upgrade-preserve-values", spec: `
values: {greeting: hi}
upgrade: {preserveValues: true}
postRenderStrategy: nohooks
`, opts: RenderOptions{Upgrade: true, Previous: &releasev1.Release{
			Chart: renderChart(), Config: map[string]any{"greeting": "from-before", "replicas": 5},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
			if err := yaml.UnmarshalStrict([]byte(tc.spec), &hr.Spec); err != nil {
				t.Fatal(err)
			}
			values, err := hr.GetValues()
			if err != nil {
				t.Fatal(err)
			}
			r, err := Render(context.Background(), hr, renderChart(), values, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", "render", tc.name+".golden"), printRendered(t, r))
		})
	}
}

func printRendered(t *testing.T, r *Rendered) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# release %s/%s, CRD policy %q\n", r.Namespace, r.ReleaseName, r.CRDPolicy)
	for _, part := range []struct {
		name    string
		objects []*unstructured.Unstructured
	}{{"crds", r.CRDs}, {"objects", r.Objects}, {"hooks", r.Hooks}} {
		for _, o := range part.objects {
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "--- # %s\n%s", part.name, y)
		}
	}
	return b.Bytes()
}

func TestRenderErrors(t *testing.T) {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}
	hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{}}}
	ch := renderChart()
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/bad.yaml", Data: []byte("{{ fail \"no\" }}")})
	if _, err := Render(context.Background(), hr, ch, nil, RenderOptions{}); err == nil {
		t.Error("a failing template rendered")
	}
}

// TestNamespaced: the base answer first, the CRDs for a kind it does not
// know, cluster-scoped for a kind neither knows, and base's other errors.
func TestNamespaced(t *testing.T) {
	r, err := Render(context.Background(), &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}}, renderChart(), nil,
		RenderOptions{Upgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := decodeDocuments(string(renderChart().Files[0].Data))
	if err != nil || len(crds) != 1 || len(r.CRDs) != 0 {
		t.Fatalf("CRDs: %d decoded (%v), %d rendered under Skip", len(crds), err, len(r.CRDs))
	}
	object := func(apiVersion, kind string) runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return u
	}
	base := func(o runtime.Object) (bool, error) {
		switch o.GetObjectKind().GroupVersionKind().Kind {
		case "ConfigMap":
			return true, nil
		case "Broken":
			return false, errors.New("discovery failed")
		}
		return false, &apimeta.NoKindMatchError{GroupKind: o.GetObjectKind().GroupVersionKind().GroupKind()}
	}
	for _, tc := range []struct {
		base       func(runtime.Object) (bool, error)
		obj        runtime.Object
		namespaced bool
		err        bool
	}{
		{base, object("v1", "ConfigMap"), true, false},
		{base, object("example.com/v1", "Widget"), true, false},
		{base, object("example.com/v1", "Gadget"), false, false},
		{nil, object("example.com/v1", "Widget"), true, false},
		{base, object("v1", "Broken"), false, true},
	} {
		ns, err := Namespaced(tc.base, crds)(tc.obj)
		if ns != tc.namespaced || (err != nil) != tc.err {
			t.Errorf("%s: %v, %v; want %v, error %v", tc.obj.GetObjectKind().GroupVersionKind().Kind, ns, err, tc.namespaced, tc.err)
		}
	}
}

// TestBuiltinNamespaced: client-go's kinds by their scope, others left
// to the CRDs.
func TestBuiltinNamespaced(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		namespaced       bool
		noMatch          bool
	}{
		{"v1", "ConfigMap", true, false},
		{"apps/v1", "Deployment", true, false},
		{"v1", "Namespace", false, false},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", false, false},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", false, false},
		{"example.com/v1", "Widget", false, true},
	} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(tc.apiVersion)
		u.SetKind(tc.kind)
		ns, err := BuiltinNamespaced(u)
		if ns != tc.namespaced || apimeta.IsNoMatchError(err) != tc.noMatch {
			t.Errorf("%s: %v, %v; want %v, no match %v", tc.kind, ns, err, tc.namespaced, tc.noMatch)
		}
	}
}
