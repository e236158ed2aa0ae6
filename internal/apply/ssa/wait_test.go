package ssa_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/apply/health"
	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func deployment(ns, name, nodeSelector string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: 2
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
    spec:
      nodeSelector: {%[3]s}
      containers:
      - name: app
        image: ghcr.io/stefanprodan/podinfo:6.7.0
`, ns, name, nodeSelector)
}

func TestWait(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	cs, err := m.Apply(ctx, objects(t, deployment(ns, "podinfo", "")+"\n---\n"+deployment(ns, "stuck", "no-such: node")), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ready []ssa.ObjMetadata
	for _, id := range cs.Objects() {
		if id.Name == "podinfo" {
			ready = append(ready, id)
		}
	}

	start := time.Now()
	if err := m.Wait(ctx, ready, testenv.DefaultTimeout); err != nil {
		t.Fatalf("waiting for the schedulable Deployment: %v", err)
	}
	t.Logf("Deployment/%s/podinfo Available after %s", ns, time.Since(start).Round(time.Millisecond))

	err = m.Wait(ctx, cs.Objects(), 3*time.Second)
	if err == nil {
		t.Fatal("waiting for an unschedulable Deployment: no error")
	}
	t.Logf("timeout error: %v", err)
	msg := err.Error()
	prefix := "timeout waiting for: [Deployment/" + ns + "/stuck status: 'InProgress': "
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("error %q, want it to start with %q", msg, prefix)
	}
	if strings.Contains(msg, "/podinfo") {
		t.Errorf("error %q names the ready Deployment", msg)
	}
}

// widgetCRD defines Widget, a custom resource whose status only the tests
// write, and which kstatus cannot judge: without conditions it calls every
// Widget Current.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.health.weir.test}
spec:
  group: health.weir.test
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func widget(ns, name string) string {
	return fmt.Sprintf(`
apiVersion: health.weir.test/v1
kind: Widget
metadata: {name: %s, namespace: %s}
spec: {size: 1}
`, name, ns)
}

// widgetExprs are a Widget's healthCheckExprs, in the style of Flux's CEL
// cheat sheet.
var widgetExprs = []meta.HealthCheckExpressions{{
	APIVersion: "health.weir.test/v1",
	Kind:       "Widget",
	Failed:     "status.conditions.exists(c, c.type == 'Ready' && c.status == 'False')",
	Current:    "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
}}

// setWidgetStatus writes a Widget's status.conditions through the status
// subresource.
func setWidgetStatus(t *testing.T, ns, name string, conditions ...map[string]any) {
	t.Helper()
	u := get(t, "health.weir.test/v1", "Widget", ns, name)
	list := make([]any, len(conditions))
	for i, c := range conditions {
		c["lastTransitionTime"] = "2026-11-29T10:00:00Z"
		list[i] = c
	}
	if err := unstructured.SetNestedSlice(u.Object, list, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Get(t).Client.Status().Update(context.Background(), u); err != nil {
		t.Fatalf("updating Widget %s/%s status: %v", ns, name, err)
	}
}

func readyCondition(status, message string) map[string]any {
	return map[string]any{"type": "Ready", "status": status, "reason": "Test", "message": message}
}

func TestWaitForHealthCheckExprs(t *testing.T) {
	m, _ := newManager(t)
	ns := testenv.Get(t).Namespace(t)
	ctx := context.Background()
	cs, err := m.Apply(ctx, objects(t, widgetCRD+"\n---\n"+
		widget(ns, "ready")+"\n---\n"+widget(ns, "broken")+"\n---\n"+
		widget(ns, "pending")+"\n---\n"+widget(ns, "bare")), ssa.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]ssa.ObjMetadata{}
	for _, id := range cs.Objects() {
		ids[id.Name] = id
	}
	checks, err := health.Compile(widgetExprs)
	if err != nil {
		t.Fatal(err)
	}
	opts := func(timeout time.Duration, failFast bool) ssa.WaitOptions {
		return ssa.WaitOptions{Timeout: timeout, FailFast: failFast, Status: checks.Status}
	}

	t.Run("kstatus alone calls a Widget without status Current", func(t *testing.T) {
		if err := m.Wait(ctx, []ssa.ObjMetadata{ids["bare"]}, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("returns once current holds", func(t *testing.T) {
		done := make(chan error, 1)
		go func() { done <- m.WaitFor(ctx, []ssa.ObjMetadata{ids["ready"]}, opts(testenv.DefaultTimeout, true)) }()
		select {
		case err := <-done:
			t.Fatalf("WaitFor returned before the Widget had a status: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		// Neither failed nor current holds: InProgress, the wait goes on.
		setWidgetStatus(t, ns, "ready", readyCondition("Unknown", "warming up"))
		select {
		case err := <-done:
			t.Fatalf("WaitFor returned while the Widget was in progress: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		set := time.Now()
		setWidgetStatus(t, ns, "ready", readyCondition("True", "ok"))
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("WaitFor returned %s after current began to hold", time.Since(set).Round(time.Millisecond))
		case <-time.After(testenv.DefaultTimeout):
			t.Fatal("WaitFor did not return")
		}
	})

	setWidgetStatus(t, ns, "broken", readyCondition("False", "quota exceeded"))
	setWidgetStatus(t, ns, "pending", map[string]any{"type": "Reconciling", "status": "True"})

	t.Run("fails fast when failed holds", func(t *testing.T) {
		start := time.Now()
		err := m.WaitFor(ctx, []ssa.ObjMetadata{ids["pending"], ids["broken"], ids["ready"]}, opts(testenv.DefaultTimeout, true))
		want := "failed early due to stalled resources: [Widget/" + ns + "/broken status: 'Failed': quota exceeded]"
		if err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("fail-fast took %s", elapsed)
		}
	})

	t.Run("without fail-fast a Failed object waits for the timeout", func(t *testing.T) {
		err := m.WaitFor(ctx, []ssa.ObjMetadata{ids["broken"]}, opts(time.Second, false))
		want := "timeout waiting for: [Widget/" + ns + "/broken status: 'Failed': quota exceeded]"
		if err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	})

	t.Run("times out in Flux's format", func(t *testing.T) {
		err := m.WaitFor(ctx, []ssa.ObjMetadata{ids["pending"], ids["bare"], ids["ready"]}, opts(2*time.Second, true))
		if err == nil {
			t.Fatal("no error")
		}
		t.Logf("timeout error: %v", err)
		// bare has no status: the expressions cannot be evaluated, so it is
		// Unknown with the CEL error; pending has conditions, none holds.
		wantPrefix := "timeout waiting for: [Widget/" + ns + "/bare status: 'Unknown': healthCheckExprs health.weir.test/v1 Widget failed expression "
		wantSuffix := ", Widget/" + ns + "/pending status: 'InProgress': no healthCheckExprs expression holds yet]"
		if msg := err.Error(); !strings.HasPrefix(msg, wantPrefix) || !strings.HasSuffix(msg, wantSuffix) {
			t.Errorf("error %q, want it to start with %q and end with %q", msg, wantPrefix, wantSuffix)
		}
	})
}
