package helmrelease

import (
	"fmt"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// testJobTemplate is a Helm test hook. kwok completes a Job's Pod, so the
// test passes; with .Values.testFails the Pod cannot be scheduled and the
// Job fails after its deadline.
const testJobTemplate = `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    "helm.sh/hook": test
spec:
  backoffLimit: 0
  {{- if .Values.testFails }}
  activeDeadlineSeconds: 2
  {{- end }}
  template:
    spec:
      restartPolicy: Never
      {{- if .Values.testFails }}
      nodeSelector:
        no-such: node
      {{- end }}
      containers:
        - name: test
          image: example.com/test:v1
`

func newTestedChart(version string) *chartv2.Chart {
	ch := newChart(version)
	ch.Templates = append(ch.Templates, &common.File{Name: "templates/tests/job.yaml", Data: []byte(testJobTemplate), ModTime: ch.ModTime})
	return ch
}

// TestHelmTests: passing tests make Ready say so; failing tests count as
// a failed upgrade (stalled with Flux's default of no retries) unless
// spec.test.ignoreFailures.
func TestHelmTests(t *testing.T) {
	f := newFixture(t)
	f.publish(newTestedChart("1.0.0"))
	tested := func(name string, ignore bool) *helmv2.HelmRelease {
		return f.helmRelease(name, func(s *helmv2.HelmReleaseSpec) {
			s.Test = &helmv2.Test{Enable: true, IgnoreFailures: ignore}
		})
	}
	strict, lenient := tested("strict", false), tested("lenient", true)
	f.env.Create(t, strict, lenient)
	for _, hr := range []*helmv2.HelmRelease{strict, lenient} {
		f.waitReady(hr, fmt.Sprintf("Helm test succeeded for release %s/%s.v1 with chart app@1.0.0: 1 test hook(s) completed successfully", f.ns, hr.Name))
		snap := hr.Status.History.Latest()
		if hooks := snap.GetTestHooks(); len(hooks) != 1 || hooks[hr.Name+"-test"] == nil || hooks[hr.Name+"-test"].Phase != "Succeeded" {
			t.Errorf("%s test hooks = %+v", hr.Name, hooks)
		}
		if c := conditions.Get(hr, helmv2.ReleasedCondition); c == nil || c.Reason != helmv2.InstallSucceededReason {
			t.Errorf("%s Released = %+v", hr.Name, c)
		}
	}

	fail := &helmv2.Values{Raw: []byte(`{"testFails":true}`)}
	f.env.Update(t, strict, func() { strict.Spec.Values = fail })
	f.env.Update(t, lenient, func() { lenient.Spec.Values = fail })

	stalled := f.waitCondition(strict, meta.StalledCondition, metav1.ConditionTrue, release.RetriesExceededReason)
	if want := fmt.Sprintf("Failed to upgrade after 1 attempt(s); fix the cause, then run 'weir reconcile hr strict -n %s --reset'", f.ns); stalled.Message != want {
		t.Errorf("Stalled = %q, want %q", stalled.Message, want)
	}
	if c := conditions.Get(strict, helmv2.TestSuccessCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != helmv2.TestFailedReason {
		t.Errorf("strict TestSuccess = %+v", c)
	}
	f.env.AssertEventPrefix(t, strict, helmv2.TestFailedReason,
		fmt.Sprintf("Helm test failed for release %s/strict.v2 with chart app@1.0.0: ", f.ns))

	f.waitCondition(lenient, helmv2.TestSuccessCondition, metav1.ConditionFalse, helmv2.TestFailedReason)
	f.waitReady(lenient, fmt.Sprintf("Helm upgrade succeeded for release %s/lenient.v2 with chart app@1.0.0", f.ns))
}
