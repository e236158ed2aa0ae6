package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// optionalDeployment is a Deployment rendered when .Values.deploy is set.
// This package's control plane has no node and no controller manager, so
// the Deployment never becomes available: an upgrade that adds it waits
// until its timeout.
const optionalDeployment = `{{- if .Values.deploy }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec: {containers: [{name: app, image: example.com/app:v1}]}
{{- end }}
`

// TestKilledDuringUpgradeIsUnlocked: weir-controller killed with SIGKILL
// while a Helm upgrade waits leaves the release pending-upgrade (Flux's
// "another operation is in progress"); the restarted controller unlocks
// it, says so in an event, and upgrades to the fixed values.
func TestKilledDuringUpgradeIsUnlocked(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := helmserver.New(t, helmserver.Options{})
	ch := helmserver.NewChart("app", "1.0.0", "1.0")
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/deployment.yaml", Data: []byte(optionalDeployment), ModTime: ch.ModTime})
	srv.AddChart(t, ch)
	p := newControllerProcess(t, env, "source,helm")
	p.start()

	repo := &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "charts"},
		Spec:       sourcev1.HelmRepositorySpec{URL: srv.URL(), Interval: metav1.Duration{Duration: time.Hour}},
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart: "app", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: helmv2.HelmRepositoryKind, Name: "charts"},
			}},
			Upgrade: &helmv2.Upgrade{Timeout: &metav1.Duration{Duration: 10 * time.Minute}},
		},
	}
	env.Create(t, repo, hr)
	waitReleased(t, env, hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", ns))

	env.Update(t, hr, func() { hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"deploy":true}`)} })
	testenv.Eventually(t, 3*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		var s corev1.Secret
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sh.helm.release.v1.app.v2"}, &s)
		return err == nil && s.Labels["status"] == "pending-upgrade", fmt.Sprintf("v2: %v %v", err, s.Labels["status"])
	})
	p.kill()

	env.Update(t, hr, func() { hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"deploy":false}`)} })
	p.start()
	waitReleased(t, env, hr, fmt.Sprintf("Helm upgrade succeeded for release %s/app.v3 with chart app@1.0.0", ns))
	env.AssertEvent(t, hr, "PendingRelease",
		fmt.Sprintf("Unlocked Helm release %s/app.v2 with chart app@1.0.0 in pending-upgrade state", ns))
}

// waitReleased waits until hr is Ready with message.
func waitReleased(t *testing.T, env *testenv.Env, hr *helmv2.HelmRelease, message string) {
	t.Helper()
	testenv.Eventually(t, 3*testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, err.Error()
		}
		c := conditions.Get(hr, meta.ReadyCondition)
		if c == nil {
			return false, "no Ready condition"
		}
		return c.Status == metav1.ConditionTrue && c.Message == message, c.Message
	})
}
