package helmrelease

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// phasedWidgetChart is widgetChart whose CRD keeps any status, so a test
// can play the Widget's controller by writing status.phase.
func phasedWidgetChart(t *testing.T, version, group string) *chartv2.Chart {
	t.Helper()
	ch := widgetChart(t, version, group, false)
	crd := widgetCRD(group, false)
	preserve := true
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.XPreserveUnknownFields = &preserve
	data, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	ch.Files = append(ch.Files, &common.File{Name: "crds/widget.yaml", Data: data, ModTime: ch.ModTime})
	return ch
}

func widgetPhases(group string) []meta.HealthCheckExpressions {
	return []meta.HealthCheckExpressions{{
		APIVersion: group + "/v1", Kind: "Widget",
		Current: "status.phase == 'Ready'", Failed: "status.phase == 'Failed'",
	}}
}

// setPhase writes status.phase of the Widget app, once it exists.
func (f *fixture) setPhase(group, phase string) {
	f.t.Helper()
	testenv.Eventually(f.t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		w := &unstructured.Unstructured{}
		w.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"})
		if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "app"}, w); err != nil {
			return false, err.Error()
		}
		if err := unstructured.SetNestedField(w.Object, phase, "status", "phase"); err != nil {
			return false, err.Error()
		}
		if err := f.env.Client.Update(ctx, w); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// TestHealthCheckExprs: an install waits until the CEL expressions say the
// chart's custom resource is Current; an upgrade whose custom resource
// the expressions call Failed fails early, and Helm's storage records the
// revision failed; an expression that does not compile stalls the
// HelmRelease before any install.
func TestHealthCheckExprs(t *testing.T) {
	f := newFixture(t)
	group := f.ns + ".health.weir.dev"
	f.deleteCRDAtEnd(group)
	f.publish(phasedWidgetChart(t, "1.0.0", group))
	hr := f.helmRelease("app", func(s *helmv2.HelmReleaseSpec) {
		s.HealthCheckExprs = widgetPhases(group)
		s.Install = &helmv2.Install{Timeout: &metav1.Duration{Duration: 2 * time.Minute}}
	})
	f.env.Create(t, hr)
	f.waitCondition(hr, meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason)
	time.Sleep(3 * time.Second) // the Widget has no phase yet: the install must still be waiting
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(hr), hr); err != nil {
		t.Fatal(err)
	}
	if len(hr.Status.History) != 0 || hr.Status.LastReleaseRevision != 0 {
		t.Fatalf("install finished before the Widget was Current: %v", describe(hr))
	}
	f.setPhase(group, "Ready")
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/app.v1 with chart app@1.0.0", f.ns))

	f.setPhase(group, "Failed")
	f.env.Update(t, hr, func() { hr.Spec.Values = &helmv2.Values{Raw: []byte(`{"greeting":"again"}`)} })
	c := f.waitCondition(hr, helmv2.ReleasedCondition, metav1.ConditionFalse, helmv2.UpgradeFailedReason)
	if !strings.Contains(c.Message, "failed early due to stalled resources") || !strings.Contains(c.Message, "Widget/"+f.ns+"/app") {
		t.Errorf("Released = %q, want the failed Widget named", c.Message)
	}
	if s := f.storageStatus("app", 2); s != "failed" {
		t.Errorf("v2 in storage is %q, want failed", s)
	}

	bad := f.helmRelease("bad", func(s *helmv2.HelmReleaseSpec) {
		s.HealthCheckExprs = []meta.HealthCheckExpressions{{APIVersion: group + "/v1", Kind: "Widget", Current: "status.phase ==="}}
	})
	f.env.Create(t, bad)
	st := f.waitCondition(bad, meta.StalledCondition, metav1.ConditionTrue, invalidCELReason)
	if !strings.Contains(st.Message, "Reconciliation failed terminally due to configuration error") {
		t.Errorf("Stalled = %q", st.Message)
	}
	if got := f.storageSecrets("bad"); len(got) != 0 {
		t.Errorf("a release was installed despite the invalid expression: %v", got)
	}
}

// storageStatus is the status label of the storage Secret of revision v.
func (f *fixture) storageStatus(name string, v int) string {
	f.t.Helper()
	var list unstructured.UnstructuredList
	list.SetAPIVersion("v1")
	list.SetKind("SecretList")
	if err := f.env.Client.List(context.Background(), &list, client.InNamespace(f.ns),
		client.MatchingLabels{"owner": "helm", "name": name, "version": fmt.Sprint(v)}); err != nil {
		f.t.Fatal(err)
	}
	if len(list.Items) != 1 {
		return fmt.Sprintf("%d Secrets", len(list.Items))
	}
	return list.Items[0].GetLabels()["status"]
}
