package helmrelease

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// widgetCRD is a CRD of kind Widget in group; with color, its schema also
// has spec.color (the chart's next version).
func widgetCRD(group string, color bool) *apiextensionsv1.CustomResourceDefinition {
	props := map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}
	if color {
		props["color"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: props},
					},
				}},
			}},
		},
	}
}

// widgetChart is a chart whose template is one Widget of group; withCRD
// also ships the CRD in crds/ (with spec.color from version 2.0.0 on).
func widgetChart(t *testing.T, version, group string, withCRD bool) *chartv2.Chart {
	t.Helper()
	ch := newChart(version)
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/widget.yaml", ModTime: ch.ModTime, Data: []byte(fmt.Sprintf(
		"apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  size: 3\n", group))})
	if withCRD {
		data, err := yaml.Marshal(widgetCRD(group, strings.HasPrefix(version, "2.")))
		if err != nil {
			t.Fatal(err)
		}
		ch.Files = append(ch.Files, &common.File{Name: "crds/widget.yaml", Data: data, ModTime: ch.ModTime})
	}
	return ch
}

func (f *fixture) crdHasColor(group string) bool {
	f.t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Name: "widgets." + group}, &crd); err != nil {
		f.t.Fatalf("CRD of %s: %v", group, err)
	}
	_, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["color"]
	return ok
}

func (f *fixture) deleteCRDAtEnd(group string) {
	f.t.Cleanup(func() {
		_ = f.env.Client.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group}})
	})
}

// TestCRDPolicies: install creates the chart's CRDs (Create, the default)
// and the custom resources that use them in the same install; an upgrade
// leaves a changed CRD alone under Skip (upgrade's default) and replaces it
// under CreateReplace; install.crds Skip installs no CRD, so the release
// fails naming the unknown kind.
func TestCRDPolicies(t *testing.T) {
	f := newFixture(t)
	group := f.ns + ".crds.weir.dev"
	f.deleteCRDAtEnd(group)
	f.publish(widgetChart(t, "1.0.0", group, true))
	hr := f.helmRelease("app", nil)
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"})
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "app"}, widget); err != nil {
		t.Fatalf("Widget installed with its CRD: %v", err)
	}
	if f.crdHasColor(group) {
		t.Fatal("CRD of chart 1.0.0 has spec.color")
	}

	f.publish(widgetChart(t, "2.0.0", group, true))
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/app.v2 with chart app@2.0.0", f.ns))
	if f.crdHasColor(group) {
		t.Error("upgrade with the default CRD policy (Skip) replaced the CRD")
	}

	f.env.Update(t, hr, func() { hr.Spec.Upgrade = &helmv2.Upgrade{CRDs: helmv2.CreateReplace} })
	f.publish(widgetChart(t, "2.0.1", group, true))
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/app.v3 with chart app@2.0.1", f.ns))
	if !f.crdHasColor(group) {
		t.Error("upgrade with CreateReplace left the old CRD")
	}

	skipped := f.ns + ".skipped.weir.dev"
	f.deleteCRDAtEnd(skipped)
	g := newFixtureIn(t, f.env, f.ns, "skipped")
	g.publish(widgetChart(t, "1.0.0", skipped, true))
	noCRDs := g.helmRelease("skipped", func(s *helmv2.HelmReleaseSpec) {
		s.Install = &helmv2.Install{CRDs: helmv2.Skip}
	})
	f.env.Create(t, noCRDs)
	c := g.waitCondition(noCRDs, meta.ReadyCondition, metav1.ConditionFalse, helmv2.InstallFailedReason)
	if !strings.Contains(c.Message, "Widget") {
		t.Errorf("install without the CRD: %q, want the unknown kind named", c.Message)
	}
}

// TestKindCreatedLaterIsFound: what Helm learns about the cluster is
// shared between releases, yet a CRD created by someone else after a
// release was installed is found by the next release that uses it.
func TestKindCreatedLaterIsFound(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	first := f.helmRelease("first", nil)
	f.env.Create(t, first)
	f.waitReady(first, fmt.Sprintf("Helm install succeeded for release %s/first.v1 with chart app@1.0.0", f.ns))

	group := f.ns + ".later.weir.dev"
	f.deleteCRDAtEnd(group)
	f.env.Create(t, widgetCRD(group, false))
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := f.env.Client.Get(ctx, client.ObjectKey{Name: "widgets." + group}, &crd); err != nil {
			return false, err.Error()
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, "CRD not established"
	})
	g := newFixtureIn(t, f.env, f.ns, "later")
	g.publish(widgetChart(t, "1.0.0", group, false))
	later := g.helmRelease("later", nil)
	f.env.Create(t, later)
	f.waitReady(later, fmt.Sprintf("Helm install succeeded for release %s/later.v1 with chart app@1.0.0", f.ns))
	if c := conditions.Get(later, meta.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
}

// newFixtureIn is a fixture of another HelmChart, name, in namespace ns.
func newFixtureIn(t *testing.T, env *testenv.Env, ns, name string) *fixture {
	t.Helper()
	f := &fixture{t: t, env: env, ns: ns}
	f.chart = &sourcev1.HelmChart{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: sourcev1.HelmChartSpec{
			Chart: "app", Version: "*", Interval: metav1.Duration{Duration: time.Hour},
			SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: "none"},
		},
	}
	env.Create(t, f.chart)
	return f
}
