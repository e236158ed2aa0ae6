package release

import (
	"errors"
	"testing"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestManifestObjects(t *testing.T) {
	rel := &releasev1.Release{Name: "app", Namespace: "apps", Version: 3, Manifest: `---
# Source: app/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  labels: {tier: web}
data: {a: b}
---
# Source: app/templates/ns.yaml
apiVersion: v1
kind: Namespace
metadata:
  name: extra
---
# Source: app/templates/empty.yaml
---
apiVersion: v1
kind: Service
metadata:
  name: elsewhere
  namespace: other
`}
	namespaced := func(o runtime.Object) (bool, error) {
		return o.GetObjectKind().GroupVersionKind().Kind != "Namespace", nil
	}
	objs, err := ManifestObjects(rel, namespaced)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 3 {
		t.Fatalf("%d objects, want 3", len(objs))
	}
	for i, want := range []string{"apps/app-config", "/extra", "other/elsewhere"} {
		if got := objs[i].GetNamespace() + "/" + objs[i].GetName(); got != want {
			t.Errorf("object %d = %s, want %s", i, got, want)
		}
		if objs[i].GetLabels()["app.kubernetes.io/managed-by"] != "Helm" ||
			objs[i].GetAnnotations()["meta.helm.sh/release-name"] != "app" || objs[i].GetAnnotations()["meta.helm.sh/release-namespace"] != "apps" {
			t.Errorf("object %d lacks Helm's metadata: %v %v", i, objs[i].GetLabels(), objs[i].GetAnnotations())
		}
	}
	if objs[0].GetLabels()["tier"] != "web" {
		t.Errorf("chart labels lost: %v", objs[0].GetLabels())
	}
	if objs, err := ManifestObjects(nil, namespaced); objs != nil || err != nil {
		t.Errorf("no release: %v, %v", objs, err)
	}
	failing := func(runtime.Object) (bool, error) { return false, errors.New("no kind") }
	if _, err := ManifestObjects(rel, failing); err == nil {
		t.Error("an unknown kind is not an error")
	}
	if _, err := ManifestObjects(&releasev1.Release{Manifest: "a: [b"}, namespaced); err == nil {
		t.Error("broken YAML is not an error")
	}
}
