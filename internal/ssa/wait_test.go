package ssa_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/ssa"
	"github.com/weir-gitops/weir/internal/testenv"
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
