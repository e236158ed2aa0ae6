package helmrelease

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestChartTemplate: spec.chart makes the HelmChart <ns>-<name>, reported
// in status.helmChart; its artifact is installed; moving to spec.chartRef
// deletes it. No HelmChart controller runs here: the test plays it,
// writing the generated HelmChart's status by hand.
func TestChartTemplate(t *testing.T) {
	f := newFixture(t)
	hr := f.helmRelease("tpl", func(s *helmv2.HelmReleaseSpec) {
		s.ChartRef = nil
		s.Chart = &helmv2.HelmChartTemplate{
			ObjectMeta: &helmv2.HelmChartTemplateObjectMeta{Labels: map[string]string{"team": "a"}},
			Spec: helmv2.HelmChartTemplateSpec{
				Chart:     "app",
				Version:   "1.x",
				SourceRef: helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"},
				Interval:  &metav1.Duration{Duration: 5 * time.Minute},
			},
		}
	})
	f.env.Create(t, hr)

	generated := &sourcev1.HelmChart{}
	key := client.ObjectKey{Namespace: f.ns, Name: f.ns + "-tpl"}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := f.env.Client.Get(ctx, key, generated)
		return err == nil, fmt.Sprint(err)
	})
	sp := generated.Spec
	if sp.Chart != "app" || sp.Version != "1.x" || sp.SourceRef.Kind != sourcev1.HelmRepositoryKind || sp.SourceRef.Name != "charts" ||
		sp.Interval.Duration != 5*time.Minute || generated.Labels["team"] != "a" || generated.Labels[nameLabel] != "tpl" ||
		generated.Labels[namespaceLabel] != f.ns {
		t.Errorf("generated HelmChart = %+v %v", sp, generated.Labels)
	}

	f.chart = generated
	f.publish(newChart("1.2.0"))
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/tpl.v1 with chart app@1.2.0", f.ns))
	if hr.Status.HelmChart != key.String() {
		t.Errorf("status.helmChart = %q", hr.Status.HelmChart)
	}

	// Moving to chartRef garbage-collects the generated HelmChart.
	other := &sourcev1.HelmChart{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: f.ns},
		Spec: sourcev1.HelmChartSpec{Chart: "app", Interval: metav1.Duration{Duration: time.Hour},
			SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"}},
	}
	f.env.Create(t, other)
	f.chart = other
	f.publish(newChart("1.3.0"))
	f.env.Update(t, hr, func() {
		hr.Spec.Chart = nil
		hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.HelmChartKind, Name: "shared"}
	})
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/tpl.v2 with chart app@1.3.0", f.ns))
	if hr.Status.HelmChart != "" {
		t.Errorf("status.helmChart after the move = %q", hr.Status.HelmChart)
	}
	f.waitGone(generated)
}
