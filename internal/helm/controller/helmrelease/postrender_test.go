package helmrelease

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/helm/release"
)

// TestPostRenderersAndCommonMetadata: a strategic-merge patch (a label
// and a replica count), a JSON 6902 patch, an image override and
// commonMetadata reach the live objects, the origin labels win over a
// patch that tries to change them, and Render (what `weir build hr`
// prints) renders the very objects the controller applied.
func TestPostRenderersAndCommonMetadata(t *testing.T) {
	f := newFixture(t)
	ch := newChart("1.0.0")
	f.publish(ch)
	hr := f.helmRelease("rendered", func(s *helmv2.HelmReleaseSpec) {
		s.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
			Patches: []meta.Patch{
				{Target: &meta.Selector{Kind: "Deployment"}, Patch: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: any
  labels:
    patched: "yes"
    helm.toolkit.fluxcd.io/name: spoofed
spec:
  replicas: 2
`},
				{Target: &meta.Selector{Kind: "ConfigMap"}, Patch: `[{"op": "add", "path": "/data/extra", "value": "from-json6902"}]`},
			},
			Images: []meta.Image{{Name: "example.com/app", NewName: "registry.local/app", NewTag: "v9"}},
		}}}
		s.CommonMetadata = &helmv2.CommonMetadata{Labels: map[string]string{"team": "platform"}, Annotations: map[string]string{"owner": "sre"}}
	})
	f.env.Create(t, hr)
	f.waitReady(hr, fmt.Sprintf("Helm install succeeded for release %s/rendered.v1 with chart app@1.0.0", f.ns))

	deploy := &appsv1.Deployment{}
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "rendered"}, deploy); err != nil {
		t.Fatal(err)
	}
	if deploy.Labels["patched"] != "yes" || deploy.Labels["team"] != "platform" || deploy.Annotations["owner"] != "sre" ||
		deploy.Labels[release.OriginNameLabel] != "rendered" {
		t.Errorf("Deployment metadata = %v %v", deploy.Labels, deploy.Annotations)
	}
	if deploy.Spec.Replicas == nil || *deploy.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2 from the patch", deploy.Spec.Replicas)
	}
	if img := deploy.Spec.Template.Spec.Containers[0].Image; img != "registry.local/app:v9" {
		t.Errorf("image = %s, want the override", img)
	}
	cm := f.configMap("rendered-app")
	if cm.Data["extra"] != "from-json6902" || cm.Labels["team"] != "platform" || cm.Annotations["owner"] != "sre" {
		t.Errorf("ConfigMap = %v %v %v", cm.Data, cm.Labels, cm.Annotations)
	}

	if hr.Status.ObservedPostRenderersDigest != release.PostRenderersDigest(hr) ||
		hr.Status.ObservedCommonMetadataDigest != release.CommonMetadataDigest(hr) {
		t.Errorf("observed digests = %q %q", hr.Status.ObservedPostRenderersDigest, hr.Status.ObservedCommonMetadataDigest)
	}

	// Render sees what the controller applied.
	r, err := release.Render(context.Background(), hr, ch, map[string]any{}, release.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rendered map[string]any
	for _, o := range r.Objects {
		if o.GetKind() == "Deployment" {
			rendered = o.Object
		}
	}
	if rendered == nil {
		t.Fatalf("Render has no Deployment: %d objects", len(r.Objects))
	}
	spec := rendered["spec"].(map[string]any)
	if spec["replicas"] != int64(2) && spec["replicas"] != float64(2) {
		t.Errorf("rendered replicas = %v (%T)", spec["replicas"], spec["replicas"])
	}
	labels := toStrings(rendered["metadata"].(map[string]any)["labels"])
	for k, v := range deploy.Labels {
		if labels[k] != v {
			t.Errorf("live label %s=%s, rendered %q", k, v, labels[k])
		}
	}

	// A post-renderer change alone upgrades, and so does commonMetadata.
	f.env.Update(t, hr, func() {
		hr.Spec.PostRenderers[0].Kustomize.Patches[0].Patch = strings.Replace(hr.Spec.PostRenderers[0].Kustomize.Patches[0].Patch, `patched: "yes"`, `patched: "again"`, 1)
	})
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/rendered.v2 with chart app@1.0.0", f.ns))
	if err := f.env.Client.Get(context.Background(), client.ObjectKeyFromObject(deploy), deploy); err != nil {
		t.Fatal(err)
	}
	if got := deploy.Labels["patched"]; got != "again" {
		t.Errorf("patched label after the post-renderer change = %q, want again", got)
	}
	f.env.Update(t, hr, func() { hr.Spec.CommonMetadata.Labels["team"] = "apps" })
	f.waitReady(hr, fmt.Sprintf("Helm upgrade succeeded for release %s/rendered.v3 with chart app@1.0.0", f.ns))
	if got := f.configMap("rendered-app").Labels["team"]; got != "apps" {
		t.Errorf("team label after the commonMetadata change = %q", got)
	}
}

func toStrings(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}
