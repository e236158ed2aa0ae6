package helmrelease

import (
	"context"
	"fmt"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// capabilitiesChart shows in a ConfigMap whether its templates see
// group/v1 in .Capabilities.APIVersions.
func capabilitiesChart(version, group string) *chartv2.Chart {
	ch := newChart(version)
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/caps.yaml", ModTime: ch.ModTime, Data: []byte(fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-caps\ndata:\n  has: '{{ .Capabilities.APIVersions.Has \"%s/v1\" }}'\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n",
		group))})
	return ch
}

// TestCapabilitiesFollowTheCluster: the releases of one identity share
// what their templates see as .Capabilities (design 0038), yet a CRD
// created or deleted by someone else between two upgrades is in, then
// out of, the set the next upgrade renders with, as Helm's fresh read
// would have it.
func TestCapabilitiesFollowTheCluster(t *testing.T) {
	f := newFixture(t)
	group := f.ns + ".caps.weir.dev"
	f.deleteCRDAtEnd(group)
	hr := f.helmRelease("app", nil)
	steps := []struct {
		version string
		before  func()
		has     string
	}{
		{"1.0.0", nil, "false"},
		{"1.0.1", func() { f.createCRD(widgetCRD(group, false)) }, "true"},
		{"1.0.2", func() { f.deleteCRD(widgetCRD(group, false)) }, "false"},
	}
	for i, step := range steps {
		if step.before != nil {
			step.before()
		}
		f.publish(capabilitiesChart(step.version, group))
		if i == 0 {
			f.env.Create(t, hr)
		}
		verb := map[bool]string{true: "install", false: "upgrade"}[i == 0]
		f.waitReady(hr, fmt.Sprintf("Helm %s succeeded for release %s/app.v%d with chart app@%s", verb, f.ns, i+1, step.version))
		cm := f.configMap("app-caps")
		if cm.Data["has"] != step.has {
			t.Errorf("chart %s: .Capabilities.APIVersions.Has %s/v1 = %q, want %q", step.version, group, cm.Data["has"], step.has)
		}
		if cm.Data["kube"] == "" {
			t.Errorf("chart %s: no .Capabilities.KubeVersion", step.version)
		}
	}
}

// createCRD creates crd and waits until the API server serves it.
func (f *fixture) createCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	f.t.Helper()
	f.env.Create(f.t, crd)
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var got apiextensionsv1.CustomResourceDefinition
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(crd), &got); err != nil {
			return false, err.Error()
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, "CRD not established"
	})
}

// deleteCRD deletes crd and waits until it is gone.
func (f *fixture) deleteCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	f.t.Helper()
	if err := f.env.Client.Delete(context.Background(), crd, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		f.t.Fatal(err)
	}
	f.waitGone(crd)
}
