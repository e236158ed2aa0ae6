package helmrelease

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
)

// TestLabelledValuesSecretUpgradesAtOnce changes a valuesFrom Secret
// labelled reconcile.fluxcd.io/watch: Enabled: the release (interval one
// hour) upgrades to v2 with the new values without a reconcile request.
// An unlabelled valuesFrom Secret is not watched.
func TestLabelledValuesSecretUpgradesAtOnce(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	values := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "values", Namespace: f.ns, Labels: map[string]string{"reconcile.fluxcd.io/watch": "Enabled"}},
		StringData: map[string]string{"values.yaml": "greeting: hi\n"},
	}
	f.env.Create(t, values)
	hr := f.helmRelease("app", func(s *helmv2.HelmReleaseSpec) {
		s.ValuesFrom = []helmv2.ValuesReference{{Kind: "Secret", Name: "values"}}
	})
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))
	if got := f.configMap("app-app").Data["greeting"]; got != "hi" {
		t.Fatalf("greeting = %q", got)
	}

	start := time.Now()
	f.env.Update(t, values, func() { values.StringData = map[string]string{"values.yaml": "greeting: changed\n"} })
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/app.v2 with chart app@1.0.0", f.ns))
	t.Logf("upgraded %s after the Secret changed", time.Since(start).Round(time.Millisecond))
	if got := f.configMap("app-app").Data["greeting"]; got != "changed" {
		t.Errorf("greeting after the Secret changed = %q", got)
	}
}
