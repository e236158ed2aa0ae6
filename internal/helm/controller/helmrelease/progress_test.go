package helmrelease

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestProgressWhileActing: while an upgrade waits for a Deployment that
// cannot become ready, the HelmRelease shows Reconciling=True and
// Ready=Unknown with Flux's message and the action's own timeout, not the
// previous install's Ready=True.
func TestProgressWhileActing(t *testing.T) {
	f := newFixture(t)
	f.publish(newChart("1.0.0"))
	hr := f.helmRelease("app", nil)
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))

	f.env.Update(t, hr, func() {
		hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"unschedulable":true}`)}
		hr.Spec.Upgrade = &helmv2.Upgrade{Timeout: &metav1.Duration{Duration: 20 * time.Second}}
	})
	want := "Running 'upgrade' action with timeout of 20s"
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(hr), hr); err != nil {
			return false, err.Error()
		}
		ready, reconciling := conditions.Get(hr, meta.ReadyCondition), conditions.Get(hr, meta.ReconcilingCondition)
		if ready == nil || reconciling == nil {
			return false, fmt.Sprint(describe(hr))
		}
		return ready.Status == metav1.ConditionUnknown && ready.Reason == meta.ProgressingReason && ready.Message == want &&
			reconciling.Status == metav1.ConditionTrue && reconciling.Message == want, fmt.Sprint(describe(hr))
	})
}
