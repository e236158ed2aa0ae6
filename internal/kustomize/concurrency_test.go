package kustomize

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weir-gitops/weir/api/meta"
)

// concurrentCases are builds that differ in every input Build takes,
// including one that sets kustomize's process-wide OpenAPI schema.
func concurrentCases(root string) map[string]BuildOptions {
	return map[string]BuildOptions{
		"dev":  {Root: root, Path: "apps/dev", NoRemoteBases: true},
		"prod": {Root: root, Path: "apps/prod", TargetNamespace: "p", NamePrefix: "p-", Components: []string{"../components/ingress"}},
		"patched": {Root: root, Path: "apps/base/podinfo", Images: []meta.Image{{Name: "ghcr.io/stefanprodan/podinfo", Digest: "sha256:" + strings.Repeat("a", 64)}},
			Patches: []meta.Patch{{Patch: `[{"op":"replace","path":"/spec/maxReplicas","value":9}]`, Target: &meta.Selector{Kind: "HorizontalPodAutoscaler"}}}},
		"generated": {Root: root, Path: "plain", PostBuild: &PostBuild{Vars: map[string]string{"v": "x"}}},
		"openapi":   {Root: root, Path: "openapi"},
	}
}

func concurrencyTree() map[string]string {
	tree := map[string]string{
		"plain/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  v: ${v}\n",
		"openapi/kustomization.yaml": `resources: [cm.yaml]
openapi:
  path: schema.json
`,
		"openapi/cm.yaml":     cmYAML,
		"openapi/schema.json": `{"swagger": "2.0", "info": {"title": "t", "version": "v1"}, "paths": {}, "definitions": {}}`,
	}
	for k, v := range podinfoTree {
		tree[k] = v
	}
	return tree
}

func TestBuildConcurrent(t *testing.T) {
	root := newRoot(t, concurrencyTree())
	cases := concurrentCases(root)
	want := map[string]string{}
	for name, opts := range cases {
		want[name] = string(mustYAML(t, mustBuild(t, opts)))
	}

	t.Run("parallel subtests", func(t *testing.T) {
		for i := range 3 {
			for name, opts := range cases {
				t.Run(fmt.Sprintf("%s-%d", name, i), func(t *testing.T) {
					t.Parallel()
					if got := string(mustYAML(t, mustBuild(t, opts))); got != want[name] {
						t.Errorf("concurrent %s build differs from the serial one", name)
					}
				})
			}
		}
	})

	t.Run("goroutines", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 8 {
			for name, opts := range cases {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := Build(context.Background(), opts)
					if err != nil {
						errs <- fmt.Errorf("%s/%d: %w", name, i, err)
						return
					}
					y, err := ToYAML(res.Objects)
					if err != nil || string(y) != want[name] {
						errs <- fmt.Errorf("%s/%d: output differs from the serial build", name, i)
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// A kustomization's custom OpenAPI schema replaces kustomize's process-wide
// schema; it must not leak into the next build, where strategic merge
// patches would lose their merge keys.
func TestCustomOpenAPISchemaDoesNotLeak(t *testing.T) {
	root := newRoot(t, map[string]string{
		"pollutor/kustomization.yaml": "resources: [cm.yaml]\nopenapi:\n  path: schema.json\n",
		"pollutor/cm.yaml":            cmYAML,
		"pollutor/schema.json":        `{"swagger": "2.0", "info": {"title": "t", "version": "v1"}, "paths": {}, "definitions": {}}`,
		"victim/kustomization.yaml": `resources: [sts.yaml]
patches:
- patch: |-
    apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: db
    spec:
      template:
        spec:
          containers:
          - name: db
            resources:
              requests:
                memory: 64Mi
`,
		"victim/sts.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: busybox:latest
`,
	})
	mustBuild(t, BuildOptions{Root: root, Path: "pollutor"})
	y := string(mustYAML(t, mustBuild(t, BuildOptions{Root: root, Path: "victim"})))
	if !strings.Contains(y, "image: busybox:latest") || !strings.Contains(y, "memory: 64Mi") {
		t.Errorf("strategic merge lost its merge key after a custom schema build:\n%s", y)
	}
}
